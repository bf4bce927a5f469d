package provider

import (
	"context"
	"runtime"
	"testing"
	"weak"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

type payloadKey struct{}

// rpcPayloadKept runs one ValidateResourceConfig RPC on server with a
// context carrying a payload, ends the RPC's context as gRPC does, and
// reports whether the server still keeps the payload alive.
func rpcPayloadKept(t *testing.T, server tfprotov6.ProviderServer) bool {
	t.Helper()
	payload := new([1 << 16]byte)
	probe := weak.Make(payload)
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), payloadKey{}, payload))
	if _, err := server.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: "shortlink_link"}); err != nil {
		t.Fatal(err)
	}
	cancel()
	runtime.GC()
	runtime.GC()
	return probe.Value() != nil
}

func TestNewServer_releasesRPCContexts(t *testing.T) {
	server := NewServer("test")()
	if rpcPayloadKept(t, server) {
		t.Fatal("the server keeps a finished RPC's context alive: a plan of N links would hold N contexts")
	}
	runtime.KeepAlive(server)
}

// The plain framework server keeps every RPC's context until the provider
// stops; if this starts failing after an upgrade, the framework no longer
// does, and NewServer's wrapper can go.
func TestFrameworkServer_keepsRPCContexts(t *testing.T) {
	server := providerserver.NewProtocol6(New("test")())()
	if !rpcPayloadKept(t, server) {
		t.Fatal("terraform-plugin-framework let go of a finished RPC's context: NewServer's wrapper is no longer needed")
	}
	runtime.KeepAlive(server)
}
