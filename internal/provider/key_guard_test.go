package provider

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"github.com/hashicorp/terraform-plugin-log/tflogtest"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
)

const guardedKey = "sk_live_GUARDED_0123456789abcdef"

// leakingServer answers every RPC the guard covers with a diagnostic that
// quotes the key, and logs it: what a message built from a service that
// echoes the key would do.
type leakingServer struct {
	tfprotov6.ProviderServer // the RPCs the tests do not call
}

func leak(ctx context.Context) []*tfprotov6.Diagnostic {
	tflog.Info(ctx, "answer quoting "+guardedKey, map[string]any{"body": "Bearer " + guardedKey})
	return []*tfprotov6.Diagnostic{{Severity: tfprotov6.DiagnosticSeverityError, Summary: "key " + guardedKey, Detail: "the answer begins \"" + guardedKey + "\""}}
}

func (leakingServer) ConfigureProvider(ctx context.Context, _ *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	return &tfprotov6.ConfigureProviderResponse{Diagnostics: leak(ctx)}, nil
}

func (leakingServer) ReadResource(ctx context.Context, _ *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	return &tfprotov6.ReadResourceResponse{Diagnostics: leak(ctx)}, nil
}

func (leakingServer) PlanResourceChange(ctx context.Context, _ *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	return &tfprotov6.PlanResourceChangeResponse{Diagnostics: leak(ctx)}, nil
}

func (leakingServer) ApplyResourceChange(ctx context.Context, _ *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	return &tfprotov6.ApplyResourceChangeResponse{Diagnostics: leak(ctx)}, nil
}

func (leakingServer) ImportResourceState(ctx context.Context, _ *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	return &tfprotov6.ImportResourceStateResponse{Diagnostics: leak(ctx)}, nil
}

func (leakingServer) ReadDataSource(ctx context.Context, _ *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	return &tfprotov6.ReadDataSourceResponse{Diagnostics: leak(ctx)}, nil
}

func (leakingServer) ListResource(ctx context.Context, _ *tfprotov6.ListResourceRequest) (*tfprotov6.ListResourceServerStream, error) {
	return &tfprotov6.ListResourceServerStream{Results: slices.Values([]tfprotov6.ListResourceResult{{Diagnostics: leak(ctx)}, {Diagnostics: leak(ctx)}})}, nil
}

func (leakingServer) ValidateListResourceConfig(ctx context.Context, _ *tfprotov6.ValidateListResourceConfigRequest) (*tfprotov6.ValidateListResourceConfigResponse, error) {
	return &tfprotov6.ValidateListResourceConfigResponse{Diagnostics: leak(ctx)}, nil
}

// Once the provider knows the key, no diagnostic of any RPC the server
// passes on quotes it, and no log line of one does, whatever built them.
func TestKeyGuard_answersAndLogsOfEveryRPC(t *testing.T) {
	guard := &keyGuard{}
	guard.set(" " + guardedKey + "\n") // as the client sends it: trimmed
	s := releasingServer{ProviderServer: leakingServer{}, guard: guard}
	for name, rpc := range map[string]func(context.Context) ([]*tfprotov6.Diagnostic, error){
		"ConfigureProvider": func(ctx context.Context) ([]*tfprotov6.Diagnostic, error) {
			r, err := s.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{})
			return r.Diagnostics, err
		},
		"ReadResource": func(ctx context.Context) ([]*tfprotov6.Diagnostic, error) {
			r, err := s.ReadResource(ctx, &tfprotov6.ReadResourceRequest{})
			return r.Diagnostics, err
		},
		"PlanResourceChange": func(ctx context.Context) ([]*tfprotov6.Diagnostic, error) {
			r, err := s.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{})
			return r.Diagnostics, err
		},
		"ApplyResourceChange": func(ctx context.Context) ([]*tfprotov6.Diagnostic, error) {
			r, err := s.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{})
			return r.Diagnostics, err
		},
		"ImportResourceState": func(ctx context.Context) ([]*tfprotov6.Diagnostic, error) {
			r, err := s.ImportResourceState(ctx, &tfprotov6.ImportResourceStateRequest{})
			return r.Diagnostics, err
		},
		"ReadDataSource": func(ctx context.Context) ([]*tfprotov6.Diagnostic, error) {
			r, err := s.ReadDataSource(ctx, &tfprotov6.ReadDataSourceRequest{})
			return r.Diagnostics, err
		},
		"ValidateListResourceConfig": func(ctx context.Context) ([]*tfprotov6.Diagnostic, error) {
			r, err := s.ValidateListResourceConfig(ctx, &tfprotov6.ValidateListResourceConfigRequest{})
			return r.Diagnostics, err
		},
		"ListResource": func(ctx context.Context) ([]*tfprotov6.Diagnostic, error) {
			r, err := s.ListResource(ctx, &tfprotov6.ListResourceRequest{})
			var diags []*tfprotov6.Diagnostic
			for result := range r.Results {
				diags = append(diags, result.Diagnostics...)
			}
			return diags, err
		},
	} {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			diags, err := rpc(tflogtest.RootLogger(context.Background(), &logs))
			if err != nil {
				t.Fatal(err)
			}
			if len(diags) == 0 {
				t.Fatal("no diagnostic came back: the test proves nothing")
			}
			for _, d := range diags {
				if text := d.Summary + " " + d.Detail; strings.Contains(text, guardedKey) || !strings.Contains(text, client.Redacted) {
					t.Errorf("diagnostic %q", text)
				}
			}
			if !strings.Contains(logs.String(), "answer quoting") {
				t.Fatalf("the RPC logged nothing: the test proves nothing")
			}
			if strings.Contains(logs.String(), guardedKey) {
				t.Errorf("the key is in the RPC's logs: %s", logs.String())
			}
		})
	}
}

// diagnosticsOf knows every answer that releasingServer passes on through
// detached: an answer it does not know would go out unguarded.
func TestDiagnosticsOf_everyGuardedAnswer(t *testing.T) {
	d := []*tfprotov6.Diagnostic{{Summary: "x"}}
	for _, resp := range []any{
		&tfprotov6.ConfigureProviderResponse{Diagnostics: d},
		&tfprotov6.ValidateResourceConfigResponse{Diagnostics: d},
		&tfprotov6.UpgradeResourceStateResponse{Diagnostics: d},
		&tfprotov6.ReadResourceResponse{Diagnostics: d},
		&tfprotov6.PlanResourceChangeResponse{Diagnostics: d},
		&tfprotov6.ApplyResourceChangeResponse{Diagnostics: d},
		&tfprotov6.ImportResourceStateResponse{Diagnostics: d},
		&tfprotov6.MoveResourceStateResponse{Diagnostics: d},
		&tfprotov6.UpgradeResourceIdentityResponse{Diagnostics: d},
		&tfprotov6.GenerateResourceConfigResponse{Diagnostics: d},
		&tfprotov6.ValidateDataResourceConfigResponse{Diagnostics: d},
		&tfprotov6.ReadDataSourceResponse{Diagnostics: d},
		&tfprotov6.ValidateListResourceConfigResponse{Diagnostics: d},
	} {
		if got := diagnosticsOf(resp); len(got) != 1 || got[0] != d[0] {
			t.Errorf("diagnosticsOf(%T) = %v", resp, got)
		}
	}
}
