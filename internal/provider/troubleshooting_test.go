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

// guideConfig writes a row's input as a configuration: the provider
// block and a link, each with the row's assignments in place of the
// test's values. It is false for a row that sets anything else (a data
// source's argument, an attribute the configuration cannot set) or whose
// value is a function's result (a file's content).
func (e *testEnv) guideConfig(row guideRow) (string, bool) {
	var settings provider.SchemaResponse
	newProvider("test", nil, nil).Schema(context.Background(), provider.SchemaRequest{}, &settings)
	link := LinkResourceSchema(context.Background())
	providerAttrs := map[string]string{"base_url": fmt.Sprintf("%q", e.url), "api_key": fmt.Sprintf("%q", e.fx.APIKey)}
	linkAttrs := map[string]string{"domain_id": fmt.Sprintf("%q", e.fx.DomainID), "destination": `"https://example.com/a"`}
	if len(row.assigns) == 0 {
		return "", false
	}
	for name, value := range row.assigns {
		setting, isSetting := settings.Schema.Attributes[name]
		attr, isAttr := link.Attributes[name]
		switch {
		case strings.Contains(value, "("):
			return "", false
		case isSetting && (setting.IsOptional() || setting.IsRequired()):
			providerAttrs[name] = value
		case isAttr && (attr.IsOptional() || attr.IsRequired()):
			linkAttrs[name] = value
		default:
			return "", false
		}
	}
	block := func(header string, attrs map[string]string) string {
		var b strings.Builder
		b.WriteString(header + " {\n")
		for _, name := range slices.Sorted(maps.Keys(attrs)) {
			fmt.Fprintf(&b, "  %s = %s\n", name, attrs[name])
		}
		return b.String() + "}\n"
	}
	return block(`provider "shortlink"`, providerAttrs) + block(`resource "shortlink_link" "test"`, linkAttrs), true
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
// troubleshooting guide's input table that quotes an error for a setting
// or a link's attribute, written as it stands, fails the plan with that
// message.
func TestAccTroubleshooting_guideQuotesThePlansErrors(t *testing.T) {
	e := newTestEnv(t)
	checked := 0
	for _, row := range troubleshootingRows(t) {
		config, ok := e.guideConfig(row)
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
	if checked < 25 {
		t.Fatalf("checked %d rows of %s; the table has more", checked, troubleshootingGuide)
	}
}
