package main

import (
	"bytes"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

// accountManaged is how many links the workspace of the account scenario
// manages, whatever the size of the account.
const accountManaged = 1000

// Account scenario: a plan of the same 1,000 managed links in accounts of
// growing size, unpaged, against the no-I/O provider and terraform_data
// planning the same 1,000 entries. The three plans of a round run one after
// the other, so that each ratio compares figures of the same moments.
func (h *harness) accountScenario(report *bytes.Buffer) error {
	fmt.Fprintf(report, "## Accounts of any size\n\n"+
		"**Method** `terraform plan` (refresh, no change) of %d managed links in an unpaged account of N, median of %d rounds; "+
		"`emulator` is its time to answer the list, an upper bound of its share. "+
		"**Floor** in the same rounds: a framework provider of the same schema that does no I/O (`scripts/bench/noio`), and `terraform_data`. "+
		"**Command** `go run ./scripts/bench -only account -account-sizes %s`.\n\n",
		accountManaged, h.o.runs, joinNumbers(h.o.accountSizes))
	fmt.Fprintf(report, "| N (account) | plan | no-I/O provider | ratio | terraform_data | ratio | provider peak RSS | list requests | emulator |\n|---|---|---|---|---|---|---|---|---|\n")
	floors, err := h.accountFloors()
	if err != nil {
		return err
	}
	row := func(n int) (string, error) { return h.accountRow(n, floors) }
	return writeRows(report, h.o.accountSizes, row, "in an account of %d links")
}

// accountFloors are the working directories of the two floors, applied
// once.
type accountFloors struct{ noio, data *workdir }

func (h *harness) accountFloors() (accountFloors, error) {
	var f accountFloors
	var err error
	files := func(config string) map[string]string {
		return map[string]string{"main.tf": config, "links.json": linksFile(floorEntries(accountManaged))}
	}
	if f.noio, err = h.workdir("account-noio", nil, files(noioConfig)); err != nil {
		return f, err
	}
	if f.data, err = h.workdir("account-terraform-data", nil, files(terraformDataConfig)); err != nil {
		return f, err
	}
	logf("account: applying the floors")
	for _, w := range []*workdir{f.noio, f.data} {
		if _, err := w.terraform("apply", "-auto-approve", "-input=false"); err != nil {
			return f, err
		}
	}
	return f, nil
}

func (h *harness) accountRow(n int, floors accountFloors) (string, error) {
	settings := emulator.DefaultSettings()
	settings.Limits.Read = 1 << 30 // waiting is measured elsewhere
	es, err := startEmulator(settings)
	if err != nil {
		return "", err
	}
	defer es.close()
	logf("account of %d links: seeding", n)
	links, err := es.srv.SeedLinks(es.fx.DomainID, "bench", n)
	if err != nil {
		return "", err
	}
	w, err := h.workdir(fmt.Sprintf("account-%d", n), es, map[string]string{
		"main.tf": importConfig(true, es.fx.DomainID), "links.json": linksFile(links[:min(n, accountManaged)]),
	})
	if err != nil {
		return "", err
	}
	if h.o.profile != "" {
		w.Setenv("SHORTLINK_CPUPROFILE=" + filepath.Join(h.o.profile, fmt.Sprintf("account-%d", n)))
	}
	logf("account of %d links: importing %d", n, min(n, accountManaged))
	if _, err := w.terraform("apply", "-auto-approve", "-input=false"); err != nil {
		return "", err
	}
	plan := func(w *workdir) (time.Duration, error) {
		return w.terraform("plan", "-input=false", "-lock=false", "-detailed-exitcode")
	}
	var ours, noio, data, listing []time.Duration
	var peakKB int64
	lists := 0
	for i := range h.o.runs {
		logf("account of %d links: round %d", n, i+1)
		es.srv.ResetCounts()
		es.listing.Store(0)
		elapsed, peak, err := timedPlan(w)
		if err != nil {
			return "", err
		}
		ours, listing = append(ours, elapsed), append(listing, time.Duration(es.listing.Load()))
		peakKB = max(peakKB, peak)
		lists = max(lists, es.srv.Count(http.MethodGet, "/api/links"))
		for _, floor := range []struct {
			w   *workdir
			out *[]time.Duration
		}{{floors.noio, &noio}, {floors.data, &data}} {
			d, err := plan(floor.w)
			if err != nil {
				return "", err
			}
			*floor.out = append(*floor.out, d)
		}
	}
	p, fn, fd := median(ours), median(noio), median(data)
	return fmt.Sprintf("| %d | %s | %s | %.2f× | %s | %.2f× | %.0f MiB | %d | %s (%.0f%%) |",
		n, seconds(p), seconds(fn), p.Seconds()/fn.Seconds(), seconds(fd), p.Seconds()/fd.Seconds(),
		float64(peakKB)/1024, lists, seconds(median(listing)), 100*median(listing).Seconds()/p.Seconds()), nil
}

// noioConfig and terraformDataConfig plan the entries of links.json with
// the no-I/O provider and with Terraform's own terraform_data.
const noioConfig = noioProviderBlock + `
locals {
  links = jsondecode(file("${path.module}/links.json"))
}

resource "noio_link" "l" {
  for_each    = local.links
  domain_id   = "` + noioDomainID + `"
  slug        = each.key
  destination = each.value.destination
}
`

// noioDomainID is the domain of the no-I/O provider's links: any UUID, as
// the schema asks; nothing looks it up.
const noioDomainID = "0b6f1f5e-8a4c-4d7e-9a43-2f1c5d9e7b10"

// noioProviderBlock is where a configuration finds the no-I/O provider.
const noioProviderBlock = `
terraform {
  required_providers {
    noio = { source = "shortlink/noio" }
  }
}
`

const terraformDataConfig = `
locals {
  links = jsondecode(file("${path.module}/links.json"))
}

resource "terraform_data" "l" {
  for_each = local.links
  input    = each.value.destination
}
`
