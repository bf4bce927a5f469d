// Command terraform-provider-shortlink is the Terraform provider for the
// short-link management service.
package main

import (
	"flag"
	"log"
	"os/signal"
	"syscall"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/shortlink/terraform-provider-shortlink/internal/provider"
)

// Regenerate docs/ from templates/, examples/ and the provider's schema with
// tfplugindocs (pinned in tools/go.mod); the same as `make docs`.
//go:generate make docs

// version is set by the release build (goreleaser: -X main.version=…).
var version = "dev"

func main() {
	var debugger bool
	flag.BoolVar(&debugger, "debug", false, "start the provider with support for debuggers such as delve")
	flag.Parse()

	var opts []tf6server.ServeOpt
	if debugger {
		opts = append(opts, tf6server.WithManagedDebug())
	} else {
		// A signal sent to the process group (a terminal, a runner that
		// signals the group) reaches the provider beside Terraform.
		// Terraform answers SIGTERM by stopping the provider (StopProvider),
		// and the provider must outlive that stop to finish the writes it
		// has sent and report them; Terraform ends the provider itself
		// once it is done. (go-plugin likewise ignores SIGINT.)
		signal.Ignore(syscall.SIGTERM)
	}
	stopProfile := startProfile()
	err := tf6server.Serve(provider.Address, provider.NewServer(version), opts...)
	stopProfile()
	if err != nil {
		log.Fatal(err)
	}
}
