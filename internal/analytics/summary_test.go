package analytics

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/testclock"
	"github.com/shortlink/terraform-provider-shortlink/internal/testsupport"
)

// summarize counts an export held in memory as SummarizeClicks does.
func summarize(body string, q Query) (*Summary, error) {
	var counter clickCounter
	if err := Read(strings.NewReader(body), q, summaryColumns, &counter, noRedaction); err != nil {
		return nil, err
	}
	return counter.summary(), nil
}

func TestSummarizeClicks(t *testing.T) {
	const (
		comma   = "https://mail.example.net/inbox?a=1,2"
		quotes  = `https://news.example.org/?q="spring"`
		newline = "https://forum.example.com/t/1\r\nsecond line"
	)
	body := "\ufeff" + testsupport.ExportHeader +
		testsupport.ExportClick("2027-02-28T23:59:59.999Z", "l-1", comma) +
		testsupport.ExportClick("2027-03-01T00:00:00.000Z", "l-1", comma) +
		testsupport.ExportClick("2027-03-01T01:30:00+02:00", "l-2", quotes) + // 2027-02-28T23:30 UTC
		testsupport.ExportClick("2027-03-01T12:00:00Z", "l-2", newline) +
		testsupport.ExportClick("2027-03-02T08:00:00Z", "l-1", "") +
		testsupport.ExportClick("2027-03-02T09:00:00Z", "l-1", comma)
	s, err := summarize(body, Query{})
	if err != nil {
		t.Fatal(err)
	}
	want := &Summary{
		Total:      6,
		ByLink:     map[string]int64{"l-1": 4, "l-2": 2},
		ByDay:      map[string]int64{"2027-02-28": 2, "2027-03-01": 2, "2027-03-02": 2},
		FirstClick: testclock.Parse(t, "2027-02-28T23:30:00Z"),
		LastClick:  testclock.Parse(t, "2027-03-02T09:00:00Z"),
		TopReferrers: []ReferrerClicks{
			// A quoted CRLF is read as LF, as RFC 4180 readers do.
			{comma, 3}, {"", 1}, {"https://forum.example.com/t/1\nsecond line", 1}, {quotes, 1},
		},
		ReferrersExact: true,
	}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", s, want)
	}

	t.Run("in a range", func(t *testing.T) {
		s, err := summarize(body, Query{Since: testclock.Parse(t, "2027-03-01T00:00:00Z"), Until: testclock.Parse(t, "2027-03-02T09:00:00Z")})
		if err != nil {
			t.Fatal(err)
		}
		if s.Total != 3 || !reflect.DeepEqual(s.ByDay, map[string]int64{"2027-03-01": 2, "2027-03-02": 1}) ||
			!reflect.DeepEqual(s.ByLink, map[string]int64{"l-1": 2, "l-2": 1}) || !s.LastClick.Equal(testclock.Parse(t, "2027-03-02T08:00:00Z")) {
			t.Fatalf("got %+v", s)
		}
	})
	t.Run("an empty range", func(t *testing.T) {
		s, err := summarize(body, Query{Since: testclock.Parse(t, "2030-01-01T00:00:00Z")})
		if err != nil {
			t.Fatal(err)
		}
		want := &Summary{ByLink: map[string]int64{}, ByDay: map[string]int64{}, TopReferrers: []ReferrerClicks{}, ReferrersExact: true}
		if !reflect.DeepEqual(s, want) {
			t.Fatalf("got %+v, want %+v", s, want)
		}
	})
	t.Run("an empty export", func(t *testing.T) {
		for _, body := range []string{"", "\ufeff", "\r\n", " \n", testsupport.ExportHeader} {
			s, err := summarize(body, Query{})
			if err != nil || s.Total != 0 || len(s.ByLink) != 0 || len(s.TopReferrers) != 0 || !s.LastClick.IsZero() {
				t.Fatalf("%q: %+v, %v; want no clicks", body, s, err)
			}
		}
	})
}

func TestSummarizeClicksColumns(t *testing.T) {
	for _, header := range []string{
		"clicked_at,link_id,referrer",
		"clickedAt,linkId,referrer",
		"Clicked At,Link ID,Referer",
		"timestamp,link-id,http_referer",
		"user_agent,CLICKED_AT,slug,LINK_ID,referrer_url,extra",
	} {
		t.Run(header, func(t *testing.T) {
			columns := strings.Split(header, ",")
			row := func(at, link, ref string) string {
				values := map[string]string{"clickedat": at, "timestamp": at, "linkid": link, "referrer": ref, "referer": ref, "httpreferer": ref, "referrerurl": ref}
				fields := make([]string, len(columns))
				for i, c := range columns {
					fields[i] = values[normalizeColumn(c)]
				}
				return strings.Join(fields, ",") + "\n"
			}
			s, err := summarize(header+"\n"+row("2027-03-01T10:00:00Z", "l-1", "https://a/")+row("2027-03-02T10:00:00Z", "l-2", "https://a/"), Query{})
			if err != nil {
				t.Fatal(err)
			}
			if s.Total != 2 || s.ByLink["l-2"] != 1 || s.ByDay["2027-03-02"] != 1 || s.TopReferrers[0] != (ReferrerClicks{"https://a/", 2}) {
				t.Fatalf("got %+v", s)
			}
		})
	}
	t.Run("a missing column is named with what came back", func(t *testing.T) {
		_, err := summarize("clicked_at,link,source\n2027-03-01T10:00:00Z,l-1,x\n", Query{})
		want := `export: the header row names the columns "clicked_at", "link", "source", none of which holds the link of each click (looked for link_id, short_link_id)`
		if !errors.Is(err, ErrMalformed) || !strings.Contains(fmt.Sprint(err), want) {
			t.Fatalf("error = %v, want %q", err, want)
		}
	})
}

func TestTopReferrersOrder(t *testing.T) {
	var body strings.Builder
	body.WriteString("clicked_at,link_id,referrer\n")
	// r00 … r11 with 1, 1, 2, 2, … clicks: ties in every pair.
	for i := range 12 {
		for range i/2 + 1 {
			fmt.Fprintf(&body, "2027-03-01T10:00:00Z,l-1,r%02d\n", i)
		}
	}
	s, err := summarize(body.String(), Query{})
	if err != nil {
		t.Fatal(err)
	}
	want := []ReferrerClicks{{"r10", 6}, {"r11", 6}, {"r08", 5}, {"r09", 5}, {"r06", 4}, {"r07", 4}, {"r04", 3}, {"r05", 3}, {"r02", 2}, {"r03", 2}}
	if !reflect.DeepEqual(s.TopReferrers, want) {
		t.Fatalf("top referrers %v, want %v", s.TopReferrers, want)
	}
}

// BenchmarkSummarizeClicks reads exports of growing size: time and bytes
// allocated per click stay the same, and what is held at once is one
// record (see MaxRecordBytes), not the export.
func BenchmarkSummarizeClicks(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		var body bytes.Buffer
		w := bufio.NewWriter(&body)
		_, _ = w.WriteString(testsupport.ExportHeader)
		start := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
		for i := range n {
			_, _ = w.WriteString(testsupport.ExportClick(start.Add(time.Duration(i)*time.Minute).Format("2006-01-02T15:04:05.000Z"),
				fmt.Sprintf("l-%d", i%100), fmt.Sprintf("https://ref%d.example/", i%50)))
		}
		_ = w.Flush()
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(body.Len()))
			b.ReportAllocs()
			for b.Loop() {
				var counter clickCounter
				if err := Read(bytes.NewReader(body.Bytes()), Query{}, summaryColumns, &counter, noRedaction); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
