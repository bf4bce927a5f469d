package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// writeLinks streams a list answer of n links, each about 400 bytes, as
// a large account's would come: generated as it is written, never whole.
func writeLinks(w io.Writer, n int, envelope string) {
	bw := bufio.NewWriterSize(w, 64<<10)
	if envelope != "" {
		fmt.Fprintf(bw, `{"total":%d,%q:[`, n, envelope)
	} else {
		_, _ = bw.WriteString("[")
	}
	for i := range n {
		if i > 0 {
			_, _ = bw.WriteString(",")
		}
		fmt.Fprintf(bw, `{"id":"link-%07d","destination":"https://example.com/campaigns/2026/spring/newsletter/%07d?ref=%s","domainId":"9a8b7c6d-1111-2222-3333-444455556666",`+
			`"slug":"s-%07d","shortUrl":"https://go.example.test/s-%07d","qrCodeUrl":"https://go.example.test/qr/s-%07d.png",`+
			`"expiresAt":null,"createdAt":"2026-11-24T01:07:00.000Z","updatedAt":"2026-11-24T01:07:00.000Z","utm":{"source":"news","campaign":"c%d"}}`,
			i, i, strings.Repeat("x", 60), i, i, i, i%10)
	}
	if envelope != "" {
		_, _ = bw.WriteString(`],"nextCursor":null}`)
	} else {
		_, _ = bw.WriteString("]")
	}
	_ = bw.Flush()
}

// countingWriter counts what a handler writes.
type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n += int64(n)
	return n, err
}

// An account whose one-page listing is larger than the 32 MiB that bounded
// a list answer before is read whole, every link found.
func TestListLargerThanTheOldCap(t *testing.T) {
	const n = 100_000
	var size int64
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		cw := &countingWriter{ResponseWriter: w}
		writeLinks(cw, n, "data")
		size = cw.n
	})
	links, err := newTestClient(t, srv).ListLinks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if size <= 32<<20 {
		t.Fatalf("the answer was %d bytes, want more than 32 MiB", size)
	}
	if links.Len() != n {
		t.Fatalf("%d links, want %d", links.Len(), n)
	}
	i := 0
	for l := range links.All() {
		id := fmt.Sprintf("link-%07d", i)
		if l.ID != id || l.Slug != fmt.Sprintf("s-%07d", i) || l.ShortURL != "https://go.example.test/"+l.Slug ||
			l.UTM == nil || l.UTM.Campaign != fmt.Sprintf("c%d", i%10) || l.CreatedAt.IsZero() {
			t.Fatalf("link %d is %+v", i, l)
		}
		if got, ok := links.Get(id); !ok || got.ID != id {
			t.Fatalf("Get(%q) = %+v, %t", id, got, ok)
		}
		i++
	}
	if got, ok := links.BySlug("9A8B7C6D-1111-2222-3333-444455556666", "s-0099999"); !ok || got.ID != "link-0099999" {
		t.Fatalf("BySlug = %+v, %t", got, ok)
	}
}

// A list answer that stalls is ended by the read bound of its attempt;
// one that never ends, by the read's operation deadline; one that keeps
// coming, however long it takes, is read whole (a million links in one
// answer take minutes on a slow link).
func TestListThatStallsNeverEndsOrKeepsComing(t *testing.T) {
	// The gaps of "keeps coming" are a tenth of the bound, so that a
	// loaded machine's pauses do not make one of them a bound.
	const bound = time.Second
	for name, tc := range map[string]struct {
		serve    func(w http.ResponseWriter, r *http.Request)
		deadline time.Duration // the operation's
		links    int           // 0: an error, the read bound's or the deadline's
	}{
		"stalls": {serve: func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `[{"id":"l-1"},`)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}},
		"never ends": {deadline: 2 * bound, serve: func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `[{"id":"l-0"}`)
			for i := 1; r.Context().Err() == nil && i < 50_000_000; i++ {
				if _, err := fmt.Fprintf(w, `,{"id":"l-%d"}`, i%1000); err != nil {
					return
				}
			}
		}},
		"keeps coming for five bounds": {links: 50, serve: func(w http.ResponseWriter, r *http.Request) {
			for i := range 50 {
				_, _ = io.WriteString(w, map[bool]string{true: "[", false: ","}[i == 0]+fmt.Sprintf(`{"id":"l-%d"}`, i))
				w.(http.Flusher).Flush()
				time.Sleep(bound / 10)
			}
			_, _ = io.WriteString(w, "]")
		}},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newRawServer(t, tc.serve)
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			start := time.Now()
			links, err := newTestClient(t, srv, func(c *Config) {
				c.ReadAttemptTimeout = bound
				c.MaxRetries = new(0)
			}).ListLinks(ctx)
			switch {
			case tc.links > 0 && (err != nil || links.Len() != tc.links):
				t.Fatalf("%v links, error %v; want all %d", links, err, tc.links)
			case tc.links == 0 && !errors.Is(err, context.DeadlineExceeded):
				t.Fatalf("error %v, want the read bound or the deadline", err)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Fatalf("took %s", took)
			}
		})
	}
}

// Every envelope, and paging fields before or after the list, through the
// stream, read whole or a byte at a time (see FuzzDecodeListPage).
func TestDecodeListEnvelopesAndPaging(t *testing.T) {
	yes := true
	tests := []struct {
		name, body string
		ids        []string
		want       page
	}{
		{"bare array", `[{"id":"a"},{"id":"b"}]`, []string{"a", "b"}, page{}},
		{"data, cursor after", `{"data":[{"id":"a"}],"nextCursor":"c1"}`, []string{"a"}, page{cursor: "c1"}},
		{"cursor before items", `{"next_cursor":"c1","has_more":true,"items":[{"id":"a"}]}`, []string{"a"}, page{cursor: "c1", hasMore: &yes}},
		{"paging in meta", `{"meta":{"next":"/api/links?page=2"},"links":[{"id":"a"}]}`, []string{"a"}, page{nextURL: "/api/links?page=2"}},
		{"preferred envelope wins", `{"items":[{"id":"i"}],"data":[{"id":"d"}]}`, []string{"d"}, page{}},
		{"null data is no links", `{"items":[{"id":"i"}],"data":null}`, []string{}, page{}},
		{"HAL links object", `{"links":{"next":{"href":"x"}},"items":[{"id":"a"}],"total":1,"extra":[1,{"a":[]}]}`, []string{"a"}, page{}},
		{"repeated link keeps its first place", `[{"id":"a","slug":"1"},{"id":"b"},{"id":"a","slug":"2"}]`, []string{"a", "b"}, page{}},
		{"white space everywhere", " \n[ {\"id\" : \"a\"} ,\n\t{\"id\":\"b\"} ] \n", []string{"a", "b"}, page{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			links, p, err := newListStream(strings.NewReader(tt.body)).decodeList()
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(links); fmt.Sprint(got) != fmt.Sprint(tt.ids) {
				t.Fatalf("ids %v, want %v", got, tt.ids)
			}
			if p.nextURL != tt.want.nextURL || p.cursor != tt.want.cursor || (p.hasMore == nil) != (tt.want.hasMore == nil) {
				t.Fatalf("paging %+v, want %+v", *p, tt.want)
			}
		})
	}
	if l, _, _ := newListStream(strings.NewReader(tests[7].body)).decodeList(); l != nil {
		if a, _ := l.Get("a"); a.Slug != "2" {
			t.Fatalf("repeated link %+v, want its last version", a)
		}
	}
}

// What cannot be read is an error that says what came back and where.
func TestDecodeListErrors(t *testing.T) {
	big := strings.Repeat("a", MaxLinkRecordBytes)
	tests := []struct{ name, body, want string }{
		{"empty", "", "the body is empty"},
		{"HTML", "<!DOCTYPE html><html>", "the answer is not JSON"},
		{"a word like JSON", "nope", "the answer is not JSON"},
		{"an object link", `{"id":"a"}`, "no list of links"},
		{"a string", `"x"`, "expected a list of links, got a string"},
		{"an item over the bound", `[{"id":"a"},{"id":"b","destination":"` + big + `"}]`, `item 1 of the list is larger than 64 KiB, the client's bound for one link; it begins "{\"id\":\"b\"`},
		{"an envelope field over the bound", `{"meta":{"x":"` + big + `"},"data":[]}`, `the list's field "meta" is larger than 64 KiB`},
		{"cut short", `{"data":[{"id":"a"},{"id":"b","dest`, "the answer ends in the middle of item 1 of the list"},
		{"item not a link", `[{"id":"a"},{"id":{"x":1}}]`, `item 1 of the list: field "id": expected a string, got an object`},
		{"item not JSON", `[{"id":"a"},{"id":"b",,}]`, `item 1 of the list is not valid JSON: invalid character ',' looking for beginning of object key string; it begins "{\"id\":\"b\",,}"`},
		{"something after the list", `[{"id":"a"}] []`, `the body goes on after the list; what follows begins "[]"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := newListStream(strings.NewReader(tt.body)).decodeList()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// BenchmarkDecodeList measures reading a list answer of 10,000 links:
// the time and memory a link costs (go test -bench DecodeList -benchmem
// ./internal/client/).
func BenchmarkDecodeList(b *testing.B) {
	var body strings.Builder
	writeLinks(&body, 10_000, "")
	b.SetBytes(int64(body.Len()))
	for b.Loop() {
		links, _, err := newListStream(strings.NewReader(body.String())).decodeList()
		if err != nil || links.Len() != 10_000 {
			b.Fatal(err)
		}
	}
}
