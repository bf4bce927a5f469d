package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
)

const pathLinks = "/api/links"

// expiresAtLayout is how expiresAt is sent: UTC, milliseconds
// (links.SentPrecision: Format cuts off the rest), Z suffix, whatever
// RFC 3339 spelling the user wrote (DESIGN.md).
const expiresAtLayout = "2006-01-02T15:04:05.000Z"

// UTM holds the UTM parameters of a link; empty strings are absent ones.
type UTM struct{ Source, Medium, Campaign, Term, Content string }

// UTMParameters are the names of the UTM parameters, without the utm_
// prefix, in the order of UTM's fields: the one list the service's JSON,
// the provider's schemas and their models follow.
var UTMParameters = []string{"source", "medium", "campaign", "term", "content"}

// Link is a short link as the service answered it.
type Link struct {
	ID, Destination, DomainID, Slug, ShortURL string
	// QRCodeURL is "" when the service sends none.
	QRCodeURL string
	// ExpiresAt is nil when the link does not expire.
	ExpiresAt *time.Time
	// UTM is nil when the service sent none or null.
	UTM *UTM
	// UTMKnown is false when the response carried no utm information at all,
	// so that the caller keeps its configured value.
	UTMKnown bool
	// CreatedAt and UpdatedAt are zero when absent; always in UTC.
	CreatedAt time.Time
	UpdatedAt time.Time
}

// CreateLinkInput is the body of a create. The service does not accept utm
// on create; set it with ChangeDestination afterwards.
type CreateLinkInput struct {
	Destination, DomainID, Slug string
	ExpiresAt                   *time.Time
}

// ChangeDestinationInput is the body of a change of destination.
// UTM nil and ClearUTM true sends "utm": null; UTM nil and ClearUTM false
// leaves utm out, so the service keeps what it has.
type ChangeDestinationInput struct {
	Destination string
	UTM         *UTM
	ClearUTM    bool
}

type createBody struct {
	Destination string `json:"destination"`
	DomainID    string `json:"domainId"`
	Slug        string `json:"slug,omitempty"`
	ExpiresAt   string `json:"expiresAt,omitempty"`
}

type changeBody struct {
	Destination string          `json:"destination"`
	UTM         json.RawMessage `json:"utm,omitempty"`
}

type utmBody struct {
	Source   string `json:"source,omitempty"`
	Medium   string `json:"medium,omitempty"`
	Campaign string `json:"campaign,omitempty"`
	Term     string `json:"term,omitempty"`
	Content  string `json:"content,omitempty"`
}

// CreateLink creates a link. The POST is never re-sent after an answer that
// leaves its outcome unknown; such errors match ErrAmbiguous, and the caller
// should look for the link (ListLinks) before creating it again.
func (c *Client) CreateLink(ctx context.Context, in CreateLinkInput) (*Link, error) {
	if in.Destination == "" || in.DomainID == "" {
		return nil, errors.New("create link: destination and domain ID are required")
	}
	b := createBody{Destination: in.Destination, DomainID: in.DomainID, Slug: in.Slug}
	if in.ExpiresAt != nil {
		b.ExpiresAt = in.ExpiresAt.UTC().Format(expiresAtLayout)
	}
	cl, resp, err := c.sendJSON(ctx, http.MethodPost, pathLinks, b)
	if err != nil {
		return nil, err
	}
	link, missing, err := decodeLink(resp.body)
	if err != nil {
		// The link was most likely created; only its answer is unreadable.
		return nil, fmt.Errorf("%w; %w", c.unexpected(cl, resp, "a link", err), ErrAmbiguous)
	}
	c.secret.redactLink(link)
	if len(missing) > 0 && !c.completeFromList(ctx, link, missing) && slices.Contains(missing, "expiresAt") {
		// Neither the answer nor the list says what expiry the link has:
		// the one sent stands until a refresh reads it (nil would read as
		// none, like an empty field the provider keeps as declared).
		link.ExpiresAt = in.ExpiresAt
	}
	return link, nil
}

// completeFromList fills the fields a create's answer lacked (a service may
// answer only {"id", "shortUrl"}) from the link as the list shows it, rather
// than guess them. It is best effort: the link exists whatever happens here,
// so a failed listing leaves those fields empty (the next refresh reads
// them) instead of failing a create that succeeded. It reports whether the
// list had the link.
func (c *Client) completeFromList(ctx context.Context, link *Link, missing []string) bool {
	logFields := map[string]any{"id": link.ID, "missing": strings.Join(missing, ",")}
	links, err := c.ListLinks(ctx)
	if err != nil {
		logFields["error"] = err.Error()
		tflog.Warn(ctx, "the create's answer lacked fields and listing the links to complete them failed", logFields)
		return false
	}
	if listed, ok := links.Get(link.ID); ok {
		fillMissing(link, &listed, missing)
		tflog.Debug(ctx, "completed the create's answer from the list", logFields)
		return true
	}
	tflog.Warn(ctx, "the create's answer lacked fields and the new link is not in the list yet", logFields)
	return false
}

// maxIdlePages is how many pages in a row may bring no link not listed
// before while the list still names a next page. A list that moves forward
// brings new links on every page but the last: a page repeats links only
// when links were added ahead of it between two requests, and a whole page
// only when a page's worth were. So the count of pages is no bound (an
// account of a million links is ten thousand pages of a hundred); pages
// that stop bringing links are, as is a page named twice.
const maxIdlePages = 10

// ListLinks returns all links of the account, following every page while
// the pages bring new links (maxIdlePages). Each page is read as it streams
// in (decodeList), so an account of any size is listed in memory
// proportional to its links.
func (c *Client) ListLinks(ctx context.Context) (*LinkSet, error) {
	var all *LinkSet
	next := c.endpoint(pathLinks, nil)
	seen := map[string]bool{}
	pages, idle := 0, 0
	for next != "" {
		pages++
		seen[next] = true
		links, p, resp, err := c.listPage(ctx, next)
		if err != nil {
			return nil, err
		}
		before := all.Len()
		all = merge(all, links)
		if next, err = c.nextPage(resp.requestURL, p, resp.header); err != nil {
			return nil, fmt.Errorf("GET %s: page %d: %w", pathLinks, pages, err)
		}
		idle++
		if all.Len() > before {
			idle = 0
		}
		switch {
		case next == "":
		case seen[next]:
			return nil, fmt.Errorf("GET %s: %w: page %d points back to %q, already fetched; stopping to avoid an endless loop",
				pathLinks, ErrUnexpectedResponse, pages, next)
		case idle >= maxIdlePages:
			return nil, fmt.Errorf("GET %s: %w: pages %d to %d brought no link not listed before, yet each named a next page; stopping to avoid an endless loop",
				pathLinks, ErrUnexpectedResponse, pages-idle+1, pages)
		}
	}
	all.oneAnswer = pages == 1
	return all, nil
}

// merge adds a page's links to the ones listed before: offset-based
// paging repeats a link when links are created between two pages, and
// LinkSet keeps such a link once.
func merge(all, page *LinkSet) *LinkSet {
	if all == nil {
		return page
	}
	for l := range page.All() {
		all.Add(&l)
	}
	return all
}

// listPage reads one page as it streams in. The stream runs once per
// attempt, so an attempt cut short by the connection is retried from the
// start of the page, and only a page read whole is kept.
func (c *Client) listPage(ctx context.Context, pageURL string) (*LinkSet, *page, *response, error) {
	var links *LinkSet
	var p *page
	cl := call{method: http.MethodGet, path: pathLinks, url: pageURL, accept: acceptJSON, limit: math.MaxInt64}
	cl.stream = func(resp *http.Response) error {
		s := newListStream(resp.Body)
		s.secret, s.headKept = c.secret, headBytes+len(c.apiKey)
		var err error
		links, p, err = s.decodeList()
		if err == nil {
			return nil
		}
		if s.failed != nil {
			// The connection failed: retried like any transport error.
			// Once the attempt's read deadline has passed, that is why.
			if ctxErr := context.Cause(resp.Request.Context()); ctxErr != nil && !errors.Is(err, ctxErr) {
				return fmt.Errorf("%w: %w", ctxErr, err)
			}
			return err
		}
		return &listAnswerError{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), head: s.head, cause: err, secret: c.secret}
	}
	resp, err := c.do(ctx, cl)
	var unreadable *listAnswerError
	var notFound *APIError
	switch {
	case errors.Is(err, ErrNotFound) && errors.As(err, &notFound):
		// The list itself cannot be missing: the base URL is wrong. Not
		// "the link is gone", which would make every link look deleted.
		// Its text only: the 404 must not match ErrNotFound, "link gone".
		return nil, nil, nil, c.reach.conclude(c.wrongBaseURL(pageURL, errors.New("answered "+notFound.Answer())))
	case errors.As(err, &unreadable) && !looksLikeJSON(unreadable.head):
		// A page, not the API (a proxy's or a web site's): the same mistake.
		return nil, nil, nil, c.reach.conclude(c.wrongBaseURL(pageURL, unreadable))
	case err != nil:
		return nil, nil, nil, err
	}
	return links, p, resp, nil
}

// listAnswerError is a list answer that could not be read: what came back.
type listAnswerError struct {
	status      int
	contentType string
	head        []byte
	cause       error
	secret      *Secret
}

// Error quotes the answer, the cause's quotes included, without the API
// key. An HTML page (a proxy's, a web site's) is quoted once, by the text
// it shows, as error pages are (APIError.Answer).
// A page whose start shows no text is quoted as it begins.
func (e *listAnswerError) Error() string {
	what := fmt.Sprintf("%v; the answer begins %q", e.cause, redactedSnippet(e.secret, string(e.head), headBytes))
	if text := htmlText(e.head); text != "" && looksLikeHTML(e.head, e.contentType) {
		what = "the answer is an " + pageQuote(redactedSnippet(e.secret, text, maxErrorSnippet))
	}
	return e.secret.Redact(fmt.Sprintf("%v: status %d, Content-Type %q, expected a list of links: %s",
		ErrUnexpectedResponse, e.status, e.contentType, what))
}

func (e *listAnswerError) Unwrap() []error { return []error{ErrUnexpectedResponse, e.cause} }

// wrongBaseURL explains a list request that reached something other than
// the service's API.
func (c *Client) wrongBaseURL(pageURL string, cause error) error {
	return fmt.Errorf("%w: GET %s reached something other than the service's API (%w). base_url (now %q) must be the address that the API's paths (/api/links, /api/analytics/export) are appended to, such as https://api.example.com, without /api or any other path the API does not have",
		ErrWrongBaseURL, c.redact(pageURL), cause, c.baseURL)
}

// looksLikeJSON reports whether body starts as a JSON value would.
func looksLikeJSON(body []byte) bool {
	b := bytes.TrimSpace(body)
	return len(b) > 0 && (b[0] == '{' || b[0] == '[')
}

// ChangeDestination changes where a link points, and its utm if in says so.
// It returns (nil, nil) when the service's answer does not describe the
// whole link: no body (204), JSON null, an acknowledgement without a link
// ({"updated": true}), or a link lacking some of its fields. The caller then
// finds the link through ListLinks instead of guessing what is missing.
func (c *Client) ChangeDestination(ctx context.Context, id string, in ChangeDestinationInput) (*Link, error) {
	if id == "" || in.Destination == "" {
		return nil, errors.New("change destination: link ID and destination are required")
	}
	b := changeBody{Destination: in.Destination}
	switch {
	case in.UTM != nil:
		b.UTM, _ = marshal(utmBody(*in.UTM)) // a struct of strings always marshals
	case in.ClearUTM:
		b.UTM = json.RawMessage("null")
	}
	cl, resp, err := c.sendJSON(ctx, http.MethodPatch, linkPath(id), b)
	if err != nil {
		return nil, err
	}
	if body := bytes.TrimSpace(resp.body); len(body) == 0 || bytes.Equal(body, []byte("null")) {
		return nil, nil
	}
	link, missing, err := decodeLink(resp.body)
	switch {
	case errors.Is(err, errNoLink):
		return nil, nil
	case err != nil:
		return nil, c.unexpected(cl, resp, "a link", err)
	case len(missing) > 0:
		return nil, nil
	}
	c.secret.redactLink(link)
	return link, nil
}

// DeleteLink deletes a link. A link that does not exist is an error
// matching ErrNotFound; callers deleting may treat it as success.
func (c *Client) DeleteLink(ctx context.Context, id string) error {
	if id == "" {
		return errors.New("delete link: link ID is required")
	}
	p := linkPath(id)
	_, err := c.do(ctx, call{method: http.MethodDelete, path: p, url: c.endpoint(p, nil), accept: acceptJSON, limit: MaxJSONBodyBytes})
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound && !apiErr.JSON {
		return c.confirmGone(ctx, id, err)
	}
	return err
}

// confirmGone checks, with a listing, a 404 to the delete of link id that
// is not the service's JSON error: a page or an empty body may come from a
// proxy, or from another server a wrong base URL leads to, and taken for
// "already gone" it would drop a link that still exists from the state.
// It returns notFound when the listing lacks the link, else an error that
// does not match ErrNotFound.
func (c *Client) confirmGone(ctx context.Context, id string, notFound error) error {
	listed, err := c.ListLinks(ctx)
	if err != nil {
		return fmt.Errorf("%s, not in the service's JSON; then listing the links to check that the link is gone failed: %w", notFound.Error(), err)
	}
	if _, ok := listed.Get(id); ok {
		return fmt.Errorf("%s, not in the service's JSON, yet the service still lists link %s: the 404 came from something in front of the service, and the link was not deleted", notFound.Error(), id)
	}
	return notFound
}

func linkPath(id string) string {
	return pathLinks + "/" + url.PathEscape(id)
}

// sendJSON sends body, encoded as JSON, to path; the call comes back with
// the answer, for the errors that quote both.
func (c *Client) sendJSON(ctx context.Context, method, path string, body any) (call, *response, error) {
	b, err := marshal(body)
	if err != nil {
		return call{}, nil, fmt.Errorf("%s %s: encoding the body: %w", method, path, err)
	}
	cl := call{method: method, path: path, url: c.endpoint(path, nil), body: b, accept: acceptJSON, limit: MaxJSONBodyBytes}
	resp, err := c.do(ctx, cl)
	return cl, resp, err
}

// marshal is json.Marshal without HTML escaping, so a destination's "&" is
// sent as is rather than as \u0026.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// unexpected describes a success response that could not be read: what
// came back, so that the user can tell a proxy's page from a service bug.
func (c *Client) unexpected(cl call, resp *response, want string, cause error) error {
	return c.redactError(fmt.Errorf("%s %s: %w: status %d, Content-Type %q, expected %s: %w; the body begins %q",
		cl.method, cl.path, ErrUnexpectedResponse, resp.status, resp.contentType, want, cause,
		redactedSnippet(c.secret, string(resp.body), 200)))
}
