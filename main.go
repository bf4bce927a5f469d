// Command terraform-provider-shortlink is the Terraform provider for the
// short-link management service.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"runtime/debug"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/shortlink/terraform-provider-shortlink/internal/provider"
)

// Regenerate docs/ from templates/, examples/ and the provider's schema with
// tfplugindocs (pinned in tools/go.mod); the same as `make docs`.
//go:generate make docs

// version is set by the release build (goreleaser: -X main.version=…).
var version = "dev"

// softMemoryLimit keeps the provider process small on large workspaces.
// Terraform sends bursts of concurrent calls (validate, upgrade, plan, read)
// for every resource, each of which allocates generously in the plugin
// framework, and default garbage-collector pacing lets that garbage pile up
// in proportion to the number of resources. The provider itself holds little
// (one listing of the account's links), so collecting earlier costs little.
// GOMEMLIMIT, when set, wins.
const softMemoryLimit = 128 << 20

func main() {
	var debugger bool
	flag.BoolVar(&debugger, "debug", false, "start the provider with support for debuggers such as delve")
	flag.Parse()
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softMemoryLimit)
	}

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: provider.Address,
		Debug:   debugger,
	})
	if err != nil {
		log.Fatal(err)
	}
}
