package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/rpcctx"
)

// NewServer returns the constructor of the provider's protocol 6 server:
// the terraform-plugin-framework server, with every resource and data
// source RPC given a context from rpcctx.Detach, so that a plan of
// thousands of links does not keep every RPC's context (loggers, gRPC
// stream) alive until the process ends. main.go serves it and the
// acceptance tests run it, so both exercise the same server.
func NewServer(version string) func() tfprotov6.ProviderServer {
	return func() tfprotov6.ProviderServer {
		stop, guard := client.NewStop(), &keyGuard{}
		return releasingServer{ProviderServer: providerserver.NewProtocol6(newProvider(version, stop, guard))(), stop: stop, guard: guard}
	}
}

// releasingServer passes provider-level RPCs (schema, configure, stop:
// a handful per process) straight through and detaches the contexts of the
// RPCs Terraform sends once or more per resource instance. Its guard keeps
// the API key out of every answer's diagnostics and every RPC's logs.
type releasingServer struct {
	tfprotov6.ProviderServer
	stop  *client.Stop
	guard *keyGuard
}

// ConfigureProvider is where the guard learns the key; a message about a
// setting may quote it.
func (s releasingServer) ConfigureProvider(ctx context.Context, req *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	resp, err := s.ProviderServer.ConfigureProvider(s.guard.logging(ctx), req)
	s.guard.scrub(diagnosticsOf(resp))
	return resp, err
}

// StopProvider is Terraform's word that it is interrupted (first Ctrl-C,
// SIGINT or SIGTERM). The framework answers it by cancelling every RPC's
// context, which on its own would abandon writes the service is carrying
// out; beginning the stop first lets the client tell a stop from other
// cancellations and give writes already sent their grace period.
func (s releasingServer) StopProvider(ctx context.Context, req *tfprotov6.StopProviderRequest) (*tfprotov6.StopProviderResponse, error) {
	s.stop.Begin()
	return s.ProviderServer.StopProvider(ctx, req)
}

var _ tfprotov6.ProviderServer = releasingServer{}

// detached runs one RPC with a context released when it returns, its
// logs and its answer's diagnostics without the API key.
func detached[Req, Resp any](ctx context.Context, g *keyGuard, req Req, rpc func(context.Context, Req) (Resp, error)) (Resp, error) {
	ctx, release := rpcctx.Detach(ctx)
	defer release()
	resp, err := rpc(g.logging(ctx), req)
	g.scrub(diagnosticsOf(resp))
	return resp, err
}

func (s releasingServer) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	return detached(ctx, s.guard, req, s.ProviderServer.ValidateResourceConfig)
}

func (s releasingServer) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	return detached(ctx, s.guard, req, s.ProviderServer.UpgradeResourceState)
}

func (s releasingServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	return detached(ctx, s.guard, req, s.ProviderServer.ReadResource)
}

func (s releasingServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	return detached(ctx, s.guard, req, s.ProviderServer.PlanResourceChange)
}

func (s releasingServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	return detached(ctx, s.guard, req, s.ProviderServer.ApplyResourceChange)
}

func (s releasingServer) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	return detached(ctx, s.guard, req, s.ProviderServer.ImportResourceState)
}

func (s releasingServer) MoveResourceState(ctx context.Context, req *tfprotov6.MoveResourceStateRequest) (*tfprotov6.MoveResourceStateResponse, error) {
	return detached(ctx, s.guard, req, s.ProviderServer.MoveResourceState)
}

func (s releasingServer) UpgradeResourceIdentity(ctx context.Context, req *tfprotov6.UpgradeResourceIdentityRequest) (*tfprotov6.UpgradeResourceIdentityResponse, error) {
	return detached(ctx, s.guard, req, s.ProviderServer.UpgradeResourceIdentity)
}

func (s releasingServer) GenerateResourceConfig(ctx context.Context, req *tfprotov6.GenerateResourceConfigRequest) (*tfprotov6.GenerateResourceConfigResponse, error) {
	return detached(ctx, s.guard, req, s.ProviderServer.GenerateResourceConfig)
}

func (s releasingServer) ValidateDataResourceConfig(ctx context.Context, req *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	return detached(ctx, s.guard, req, s.ProviderServer.ValidateDataResourceConfig)
}

func (s releasingServer) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	return detached(ctx, s.guard, req, s.ProviderServer.ReadDataSource)
}

// The list RPCs are not yet part of tfprotov6.ProviderServer, so
// releasingServer passes them on itself: without these methods the
// embedded interface hides the framework's, and `terraform query` would
// find no list resource.
//
//nolint:staticcheck // ProviderServerWithListResource is deprecated only in favour of a future ProviderServer.
var _ tfprotov6.ProviderServerWithListResource = releasingServer{}

// ListResource runs on the RPC's own context, not a detached one: the
// results are streamed after the method returns, and a query sends one
// such RPC per list block, not one per link.
func (s releasingServer) ListResource(ctx context.Context, req *tfprotov6.ListResourceRequest) (*tfprotov6.ListResourceServerStream, error) {
	ls, err := s.listServer()
	if err != nil {
		return nil, err
	}
	stream, err := ls.ListResource(s.guard.logging(ctx), req)
	if stream != nil && stream.Results != nil {
		results := stream.Results
		stream.Results = func(push func(tfprotov6.ListResourceResult) bool) {
			for r := range results {
				s.guard.scrub(r.Diagnostics)
				if !push(r) {
					return
				}
			}
		}
	}
	return stream, err
}

func (s releasingServer) ValidateListResourceConfig(ctx context.Context, req *tfprotov6.ValidateListResourceConfigRequest) (*tfprotov6.ValidateListResourceConfigResponse, error) {
	ls, err := s.listServer()
	if err != nil {
		return nil, err
	}
	return detached(ctx, s.guard, req, ls.ValidateListResourceConfig)
}

// listServer is the framework's server as a list server, which every
// framework version with list resources is.
//
//nolint:staticcheck // see above
func (s releasingServer) listServer() (tfprotov6.ProviderServerWithListResource, error) {
	ls, ok := s.ProviderServer.(tfprotov6.ProviderServerWithListResource)
	if !ok {
		return nil, fmt.Errorf("the provider's server (%T) does not serve list resources; please report this to the provider's developers", s.ProviderServer)
	}
	return ls, nil
}
