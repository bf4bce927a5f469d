package provider

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
)

// keyGuard keeps the API key out of what the provider sends back to
// Terraform and what it logs. The client already leaves the key out of its
// messages and logs; the guard is the last line, where every RPC's answer
// leaves the provider (releasingServer), for a key that reaches a message
// another way: a service that echoes it into a link's field, or an error
// of a library. Configure tells it the key.
type keyGuard struct{ key atomic.Pointer[string] }

// set takes the key as the client sends it, without surrounding whitespace.
func (g *keyGuard) set(key string) {
	if key = strings.TrimSpace(key); key != "" {
		g.key.Store(&key)
	}
}

func (g *keyGuard) current() string {
	if k := g.key.Load(); k != nil {
		return *k
	}
	return ""
}

// logging returns ctx with the provider's logs masking the key.
func (g *keyGuard) logging(ctx context.Context) context.Context {
	if k := g.current(); k != "" {
		ctx = tflog.MaskAllFieldValuesStrings(ctx, k)
		ctx = tflog.MaskMessageStrings(ctx, k)
	}
	return ctx
}

// scrub takes the key out of diags, in place.
func (g *keyGuard) scrub(diags []*tfprotov6.Diagnostic) {
	k := g.current()
	if k == "" {
		return
	}
	for _, d := range diags {
		if d != nil {
			d.Summary, d.Detail = strings.ReplaceAll(d.Summary, k, client.Redacted), strings.ReplaceAll(d.Detail, k, client.Redacted)
		}
	}
}

// diagnosticsOf returns the diagnostics of an RPC's answer that
// releasingServer passes on (nil for another type, or no answer).
func diagnosticsOf(resp any) []*tfprotov6.Diagnostic {
	switch r := resp.(type) {
	case *tfprotov6.ConfigureProviderResponse:
		return r.Diagnostics
	case *tfprotov6.ValidateResourceConfigResponse:
		return r.Diagnostics
	case *tfprotov6.UpgradeResourceStateResponse:
		return r.Diagnostics
	case *tfprotov6.ReadResourceResponse:
		return r.Diagnostics
	case *tfprotov6.PlanResourceChangeResponse:
		return r.Diagnostics
	case *tfprotov6.ApplyResourceChangeResponse:
		return r.Diagnostics
	case *tfprotov6.ImportResourceStateResponse:
		return r.Diagnostics
	case *tfprotov6.MoveResourceStateResponse:
		return r.Diagnostics
	case *tfprotov6.UpgradeResourceIdentityResponse:
		return r.Diagnostics
	case *tfprotov6.GenerateResourceConfigResponse:
		return r.Diagnostics
	case *tfprotov6.ValidateDataResourceConfigResponse:
		return r.Diagnostics
	case *tfprotov6.ReadDataSourceResponse:
		return r.Diagnostics
	case *tfprotov6.ValidateListResourceConfigResponse:
		return r.Diagnostics
	}
	return nil
}
