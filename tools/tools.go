//go:build tools

// Package tools pins the development tools of the provider (documentation
// generator and linter) in a module of their own, so the provider's go.mod
// never carries them. Build them with `make tools`.
package tools

import (
	// Documentation generation: tfplugindocs.
	_ "github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs"

	// Linting: golangci-lint v2.
	_ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
)
