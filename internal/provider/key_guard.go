package provider

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
)

// keyGuard keeps the API key out of what the provider sends back to
// Terraform and what it logs. The client already leaves the key out of its
// messages and logs; the guard is the last line, where every RPC's answer
// leaves the provider (releasingServer), for a key that reaches a message
// another way: a service that echoes it into a link's field, or an error
// of a library. Configure tells it the key.
type keyGuard struct{ secret atomic.Pointer[client.Secret] }

// set takes the key as the client sends it, without surrounding whitespace.
// A key the client refuses is never sent, and is not taken: past
// client.MaxAPIKeyLength its Secret could be too large to build.
func (g *keyGuard) set(key string) {
	if key = strings.TrimSpace(key); key != "" && client.CheckAPIKey(key) == nil {
		g.secret.Store(client.NewSecret(key))
	}
}

// current is the key's Secret: before Configure, one that redacts nothing.
func (g *keyGuard) current() *client.Secret {
	if s := g.secret.Load(); s != nil {
		return s
	}
	return client.NewSecret("")
}

// logging returns ctx with the provider's logs masking the key.
func (g *keyGuard) logging(ctx context.Context) context.Context {
	return g.current().Masking(ctx)
}

// scrub takes the key out of diags, in place.
func (g *keyGuard) scrub(diags []*tfprotov6.Diagnostic) {
	secret := g.current()
	for _, d := range diags {
		if d != nil {
			d.Summary, d.Detail = secret.Redact(d.Summary), secret.Redact(d.Detail)
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
