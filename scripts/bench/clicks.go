package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

// Clicks scenario: the clicks of 100 links over 30 days, summarised by
// shortlink_clicks and read by shortlink_analytics_export.
const (
	clicksLinks = 100
	clicksDays  = 30
)

// clickReferrers are the referrers the clicks cycle through: some the CSV
// must quote, and visits without a referrer.
var clickReferrers = []string{
	"", "https://mail.example.net/inbox?a=1,2", `https://news.example.org/?q="spring"`, "https://social.example.com/post/1",
	"https://forum.example.com/t/1\nsecond line", "https://www.search.example/?q=spring+sale", "https://blog.example.com/2027/03/spring",
}

// clicksStart is the first day of the clicks.
var clicksStart = time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)

func (h *harness) clicksScenario(report *bytes.Buffer) error {
	fmt.Fprintf(report, "## Click analytics\n\n"+
		"**Method** N clicks of %d links over %d days and %d referrers; `terraform plan` re-reading one data source, median of %d; "+
		"`shortlink_clicks` keeps counts, `shortlink_analytics_export` every click (measured up to %d clicks). "+
		"**Command** `go run ./scripts/bench -only clicks`.\n\n",
		clicksLinks, clicksDays, len(clickReferrers), h.o.runs, h.o.clicksExportMax)
	fmt.Fprintf(report, "| clicks | export body | data source | plan | provider peak RSS | state |\n|---|---|---|---|---|---|\n")
	rows := func(n int) (string, error) {
		rows, err := h.clicksRows(n)
		return strings.Join(rows, "\n"), err
	}
	return writeRows(report, h.o.clickSizes, rows, "with %d clicks")
}

// clicksSource is a data source measured: its type and configuration.
type clicksSource struct{ name, config string }

func (h *harness) clicksRows(n int) ([]string, error) {
	es, err := startEmulator(emulator.DefaultSettings())
	if err != nil {
		return nil, err
	}
	defer es.close()
	if err := seedClicks(es, n); err != nil {
		return nil, err
	}
	body, err := exportSize(es)
	if err != nil {
		return nil, err
	}
	sources := []clicksSource{{"shortlink_clicks", `data "shortlink_clicks" "all" {}`}}
	if n <= h.o.clicksExportMax {
		sources = append(sources, clicksSource{"shortlink_analytics_export", fmt.Sprintf(`data "shortlink_analytics_export" "all" { max_clicks = %d }`, n)})
	}
	var rows []string
	for _, s := range sources {
		m, err := h.clicksPlan(es, n, s.name, s.config)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		rows = append(rows, fmt.Sprintf("| %d | %s | %#q | %s | %.0f MB | %s |", n, size(body), s.name, seconds(m.plan), float64(m.peakKB)/1024, size(m.state)))
	}
	return rows, nil
}

// seedClicks adds the links and n clicks, in the order of their times.
func seedClicks(es *emulatorServer, n int) error {
	links, err := es.srv.SeedLinks(es.fx.DomainID, "clicked", clicksLinks)
	if err != nil {
		return err
	}
	step := clicksDays * 24 * time.Hour / time.Duration(n)
	for i := range n {
		if err := es.srv.AddClickAt(links[i%clicksLinks].ID, clicksStart.Add(time.Duration(i)*step), clickReferrers[i%len(clickReferrers)]); err != nil {
			return err
		}
	}
	return nil
}

// exportSize is the size of the whole export, as the provider reads it.
func exportSize(es *emulatorServer) (int64, error) {
	req, err := http.NewRequest(http.MethodGet, es.url+"/api/analytics/export", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+es.fx.APIKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("export: status %d", resp.StatusCode)
	}
	return io.Copy(io.Discard, resp.Body)
}

type clicksMeasure struct {
	plan   time.Duration
	peakKB int64
	state  int64
}

func (h *harness) clicksPlan(es *emulatorServer, n int, name, dataSource string) (clicksMeasure, error) {
	var m clicksMeasure
	config := providerBlock + "\nprovider \"shortlink\" {}\n\n" + dataSource + "\n"
	w, err := h.workdir(fmt.Sprintf("clicks-%d-%s", n, name), es, map[string]string{"main.tf": config})
	if err != nil {
		return m, err
	}
	logf("%d clicks, %s: applying", n, name)
	if _, err := w.terraform("apply", "-auto-approve", "-input=false"); err != nil {
		return m, err
	}
	st, err := os.Stat(filepath.Join(w.Dir, "terraform.tfstate"))
	if err != nil {
		return m, err
	}
	m.state = st.Size()
	if h.o.profile != "" {
		w.Setenv("SHORTLINK_CPUPROFILE=" + filepath.Join(h.o.profile, fmt.Sprintf("clicks-%d-%s", n, name)))
	}
	var times []time.Duration
	for i := 0; i < h.o.runs; i++ {
		logf("%d clicks, %s: plan %d", n, name, i+1)
		elapsed, peak, err := timedPlan(w)
		if err != nil {
			return m, err
		}
		times = append(times, elapsed)
		m.peakKB = max(m.peakKB, peak)
	}
	m.plan = median(times)
	return m, nil
}

// size spells a byte count in KB or MB.
func size(b int64) string {
	if b < 1<<20 {
		return fmt.Sprintf("%.1f KB", float64(b)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(b)/(1<<20))
}
