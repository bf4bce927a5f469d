package provider

import (
	"context"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
)

// The troubleshooting guide quotes, for each mistake in a setting or an
// attribute, the message the plan shows. Its table is written by hand, so
// this test holds it to what the provider says: a message changed in the
// code and not in the guide fails here.

// troubleshootingGuide is the guide's template; docs/ is generated from it.
const troubleshootingGuide = "../../templates/guides/troubleshooting.md.tmpl"

// guideRow is a row of the guide's "input | message" table: the
// assignments its input writes, and the message quoted. An input names
// alternatives after its first ("`…` or `…`") and says more in brackets
// ("`…` (a blank CSV cell)"); what it writes together is joined by "with".
type guideRow struct {
	input   string
	assigns map[string]string // attribute name: its value as written
	message string
}

// guideAssignment is an input written as Terraform would be: `name = value`.
var guideAssignment = regexp.MustCompile("^([a-z_]+) = (.+)$")

// guideCodeSpans are the `…` spans of a cell.
var guideCodeSpans = regexp.MustCompile("`([^`]*)`")

// troubleshootingRows reads the rows of the guide's input table that quote
// an error: the rows whose message is a warning, or said in words, are
// left out.
func troubleshootingRows(t *testing.T) []guideRow {
	t.Helper()
	raw, err := os.ReadFile(troubleshootingGuide)
	if err != nil {
		t.Fatal(err)
	}
	var rows []guideRow
	inTable := false
	for line := range strings.SplitSeq(string(raw), "\n") {
		switch {
		case strings.HasPrefix(line, "| input | message |"):
			inTable = true
			continue
		case !strings.HasPrefix(line, "|"):
			inTable = false
		}
		cells := strings.SplitN(strings.TrimSuffix(strings.TrimPrefix(line, "| "), " |"), " | ", 2)
		if !inTable || len(cells) != 2 || !strings.HasPrefix(cells[1], "`") || strings.HasPrefix(cells[1], "`Warning:") {
			continue
		}
		quoted := guideCodeSpans.FindStringSubmatch(cells[1])
		if quoted == nil {
			t.Fatalf("%s: the message of %q opens a code span it does not close", troubleshootingGuide, cells[0])
		}
		row := guideRow{input: cells[0], assigns: map[string]string{}, message: quoted[1]}
		written, _, _ := strings.Cut(cells[0], "` or ")
		written, _, _ = strings.Cut(written, "` (")
		for _, span := range guideCodeSpans.FindAllStringSubmatch(written+"`", -1) {
			if m := guideAssignment.FindStringSubmatch(span[1]); m != nil {
				row.assigns[m[1]] = m[2]
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// guideDataSource names the data source a row's input is written in:
// "`id = …` in `data "shortlink_link"`".
var guideDataSource = regexp.MustCompile("in `data \"([a-z_]+)\"`")

// guideConfig writes a row's input as a configuration: the provider block
// and a link (or the data source the row names), each with the row's
// assignments in place of the test's values. It is false for a row that
// sets anything else (an attribute the configuration cannot set) or whose
// value is a function's result (a file's content).
func (e *testEnv) guideConfig(t *testing.T, row guideRow) (string, bool) {
	ctx := context.Background()
	p := newProvider("test", nil, nil)
	var settings provider.SchemaResponse
	p.Schema(ctx, provider.SchemaRequest{}, &settings)
	isSetting := settable(settings.Schema.Attributes)
	providerAttrs := map[string]string{"base_url": fmt.Sprintf("%q", e.url), "api_key": fmt.Sprintf("%q", e.fx.APIKey)}
	header, attrs := `resource "shortlink_link" "test"`, map[string]string{"domain_id": fmt.Sprintf("%q", e.fx.DomainID), "destination": `"https://example.com/a"`}
	canSet := settable(LinkResourceSchema(ctx).Attributes)
	if m := guideDataSource.FindStringSubmatch(row.input); m != nil {
		d := dataSourceNamed(ctx, p, m[1])
		if d == nil {
			t.Fatalf("%s: the row %q names data source %s, which the provider has not", troubleshootingGuide, row.input, m[1])
		}
		header, attrs, canSet = fmt.Sprintf("data %q \"test\"", m[1]), map[string]string{}, settable(dataSourceSchema(t, d).Attributes)
	}
	if len(row.assigns) == 0 {
		return "", false
	}
	for name, value := range row.assigns {
		switch {
		case strings.Contains(value, "("):
			return "", false
		case isSetting[name]:
			providerAttrs[name] = value
		case canSet[name]:
			attrs[name] = value
		default:
			return "", false
		}
	}
	return guideBlock(`provider "shortlink"`, providerAttrs) + guideBlock(header, attrs), true
}

// configurable is an attribute of any schema: the provider's, a
// resource's or a data source's.
type configurable interface {
	IsOptional() bool
	IsRequired() bool
}

// settable are the attributes of a schema that a configuration may set.
func settable[A configurable](attrs map[string]A) map[string]bool {
	names := map[string]bool{}
	for name, a := range attrs {
		names[name] = a.IsOptional() || a.IsRequired()
	}
	return names
}

// dataSourceNamed is the provider's data source of that type, or nil.
func dataSourceNamed(ctx context.Context, p *shortlinkProvider, typeName string) datasource.DataSource {
	for _, newDataSource := range p.DataSources(ctx) {
		d := newDataSource()
		var meta datasource.MetadataResponse
		d.Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: "shortlink"}, &meta)
		if meta.TypeName == typeName {
			return d
		}
	}
	return nil
}

// guideBlock is a block of attrs, in the order of their names.
func guideBlock(header string, attrs map[string]string) string {
	var b strings.Builder
	b.WriteString(header + " {\n")
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		fmt.Fprintf(&b, "  %s = %s\n", name, attrs[name])
	}
	return b.String() + "}\n"
}

// missingFromOutput is the first piece of a quoted message that the CLI's
// output lacks, in order, or "". A quote leaves out what "…" stands for;
// Terraform prints the summary apart from the detail (the quote's first
// ": "), wraps lines, and the guide drops the backquotes of code within a
// message: pieces are split at "…" and ": ", white space is folded, and
// backquotes are not compared.
func missingFromOutput(output, message string) string {
	fold := func(s string) string { return strings.Join(strings.Fields(strings.ReplaceAll(s, "`", "")), " ") }
	rest := fold(output)
	for piece := range strings.FieldsFuncSeq(message, func(r rune) bool { return r == '…' }) {
		for part := range strings.SplitSeq(piece, ": ") {
			part = fold(part)
			at := strings.Index(rest, part)
			if at < 0 {
				return part
			}
			rest = rest[at+len(part):]
		}
	}
	return ""
}

// TestAccTroubleshooting_guideQuotesThePlansErrors: each row of the
// troubleshooting guide's input table that quotes an error for a setting,
// a link's attribute or a data source's argument, written as it stands,
// fails the plan with that message.
func TestAccTroubleshooting_guideQuotesThePlansErrors(t *testing.T) {
	e := newTestEnv(t)
	checked := 0
	for _, row := range troubleshootingRows(t) {
		config, ok := e.guideConfig(t, row)
		if !ok {
			continue
		}
		checked++
		t.Run(row.input, func(t *testing.T) {
			output := planFailure(t, config)
			if missing := missingFromOutput(output, row.message); missing != "" {
				t.Errorf("the guide quotes %q for\n%s\nbut the output lacks %q:\n%s", row.message, config, missing, output)
			}
		})
	}
	// The table's rows of settings and attributes, as the guide has them:
	// fewer means the table is read wrong, and the test checks nothing.
	if checked < 26 {
		t.Fatalf("checked %d rows of %s; the table has more", checked, troubleshootingGuide)
	}
}
