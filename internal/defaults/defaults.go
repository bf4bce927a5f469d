// Package defaults holds the default timeouts of a link's operations and of
// a read, and Terraform's default parallelism they must outlast: one
// definition for the provider's schema, its client, the pacing simulation
// that holds them long enough and the benchmark.
package defaults

import "time"

// TerraformParallelism is Terraform's own default -parallelism: how many
// operations it starts at once, each of which waits behind the others of
// its run for the rate limit.
const TerraformParallelism = 10

// The default timeouts of a link's create, update and delete. A write's
// wait for its turn under the rate limit counts against them: Terraform
// starts as many operations at once as its -parallelism
// (TerraformParallelism by default), and each waits behind the others of
// its run. Where many runs share a small allowance that wait is long: in
// the pacing matrix, eight runs of 30 to 50 links on 10 writes a minute
// had a link take about half an hour to create. An hour leaves every run
// of the matrix room to finish (TestPacingMatrix fails otherwise); a write
// that cannot finish fails sooner, when the service asks for a wait past
// the timeout.
const (
	CreateTimeout = time.Hour
	UpdateTimeout = time.Hour
	DeleteTimeout = time.Hour
)

// ReadTimeout bounds one read request, its retries and its waits for the
// rate limit included, where its operation sets no deadline: Terraform
// gives refreshes and data sources no timeout. A read refused for the rate
// limit is sent again when the service says, as a write is, for as long
// as this allows.
const ReadTimeout = time.Hour
