// Package e2e holds the end-to-end tests that run the real Terraform CLI as
// a subprocess (through internal/clitest) against the emulator: what
// terraform-plugin-testing cannot do, such as interrupting or killing a run,
// or running several at once on one key.
// They run with TF_ACC=1, like the acceptance tests.
package e2e
