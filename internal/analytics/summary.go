package analytics

import (
	"context"
	"strings"
	"time"
)

// TopReferrers is how many referrers a Summary ranks.
const TopReferrers = 10

// MaxTrackedReferrers bounds the distinct referrers a Summary counts
// at once, and so its memory; see referrerCounter.
const MaxTrackedReferrers = 10_000

// Summary counts the clicks of an export. Its size grows with the
// links and days that had clicks, never with the number of clicks.
type Summary struct {
	Total int64
	// ByLink maps a link ID to its clicks; links without clicks are absent.
	ByLink map[string]int64
	// ByDay maps a UTC date (YYYY-MM-DD) to its clicks; days without clicks
	// are absent.
	ByDay map[string]int64
	// FirstClick and LastClick are the earliest and latest click, in UTC;
	// zero without clicks.
	FirstClick, LastClick time.Time
	// TopReferrers are the most frequent referrers, at most TopReferrers:
	// most clicks first, ties in byte order of the referrer. A click
	// without a referrer counts for "".
	TopReferrers []ReferrerClicks
	// ReferrersExact is false when the clicks came from more than
	// MaxTrackedReferrers distinct referrers: TopReferrers then holds
	// upper bounds (see referrerCounter).
	ReferrersExact bool
}

// ReferrerClicks is a referrer and its clicks.
type ReferrerClicks struct {
	Referrer string
	Clicks   int64
}

// ReadFunc reads the export of q as a stream and hands v the clicks in q's
// range; needed are the columns the reading cannot do without (the
// client's ReadExport).
type ReadFunc func(ctx context.Context, q Query, needed []Column, v Visitor) error

// Summarize reads the export of q with read and counts its clicks: in
// total, per link, per UTC day and per referrer. The export must name the
// time, the link and the referrer of each click.
func Summarize(ctx context.Context, read ReadFunc, q Query) (*Summary, error) {
	var counter clickCounter
	if err := read(ctx, q, summaryColumns, &counter); err != nil {
		return nil, err
	}
	return counter.summary(), nil
}

// summaryColumns are the columns Summarize needs.
var summaryColumns = []Column{ClickedAt, LinkID, Referrer}

// clickCounter is the Visitor of SummarizeClicks.
type clickCounter struct {
	linkColumn, referrerColumn int
	total                      int64
	byLink                     map[string]int64
	byDay                      map[int64]int64 // days since 1970-01-01
	first, last                time.Time
	referrers                  *referrerCounter
}

func (s *clickCounter) Begin(h Header) {
	*s = clickCounter{
		linkColumn:     LinkID.find(h.Columns),
		referrerColumn: Referrer.find(h.Columns),
		byLink:         map[string]int64{},
		byDay:          map[int64]int64{},
		referrers:      newReferrerCounter(MaxTrackedReferrers),
	}
}

func (s *clickCounter) Row(r Row) {
	s.total++
	increment(s.byLink, r.Fields[s.linkColumn])
	s.byDay[daysSinceEpoch(r.ClickedAt)]++
	if s.first.IsZero() || r.ClickedAt.Before(s.first) {
		s.first = r.ClickedAt
	}
	if r.ClickedAt.After(s.last) {
		s.last = r.ClickedAt
	}
	s.referrers.add(r.Fields[s.referrerColumn])
}

// increment counts key, copying it on first sight: a field read from the
// export shares its memory with the whole record.
func increment(m map[string]int64, key string) {
	if n, ok := m[key]; ok {
		m[key] = n + 1
		return
	}
	m[strings.Clone(key)] = 1
}

const secondsPerDay = 24 * 60 * 60

func daysSinceEpoch(t time.Time) int64 {
	s := t.Unix()
	d := s / secondsPerDay
	if s%secondsPerDay < 0 {
		d-- // round towards the past for times before 1970
	}
	return d
}

func (s *clickCounter) summary() *Summary {
	out := &Summary{
		Total:          s.total,
		ByLink:         s.byLink,
		ByDay:          make(map[string]int64, len(s.byDay)),
		FirstClick:     s.first,
		LastClick:      s.last,
		TopReferrers:   s.referrers.top(TopReferrers),
		ReferrersExact: s.referrers.exact(),
	}
	for d, n := range s.byDay {
		out.ByDay[time.Unix(d*secondsPerDay, 0).UTC().Format(time.DateOnly)] = n
	}
	return out
}
