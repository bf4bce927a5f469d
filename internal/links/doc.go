// Package links is what the provider knows about short links themselves,
// apart from Terraform: creating a link exactly once (an ambiguous create
// is never re-sent blindly; the leftover of a killed run is taken over
// only when nothing else can own it), when two spellings of a destination
// or of an instant mean the same thing, and looking one link up in the
// account's listing.
//
// It is separate from internal/provider, the Terraform glue (schemas,
// plans, state, diagnostics), so that these rules are read, changed and
// tested on their own, against the emulator and without the Terraform CLI,
// and so that the glue only translates between them and Terraform. It uses
// internal/client and internal/snapshot, and never
// terraform-plugin-framework: nothing here knows of plans or state.
package links
