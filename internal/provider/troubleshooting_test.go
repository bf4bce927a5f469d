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

	"github.com/shortlink/terraform-provider-shortlink/internal/validate"
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

// guideInput is how a row's input is written where the guide says it in
// words ("a slug over 64 characters") or as a function's result: the
// assignments, the settings the provider block leaves out, and the
// environment the plan runs in.
type guideInput struct {
	assigns map[string]string
	unset   []string
	env     map[string]string
}

// guideInputsInWords writes the input of each row whose input is not a
// literal `name = value`, by the row's input as the guide has it.
var guideInputsInWords = map[string]guideInput{
	"a destination over 2,048 characters": {
		assigns: map[string]string{"destination": fmt.Sprintf("%q", "https://example.com/"+strings.Repeat("a", 2100))}, // 2120 in all, as quoted
	},
	"a slug over 64 characters": {
		assigns: map[string]string{"slug": fmt.Sprintf("%q", strings.Repeat("s", validate.MaxSlugLength+1))},
	},
	"`SHORTLINK_BASE_URL=api.example.com` in the environment": {
		unset: []string{"base_url"},
		env:   map[string]string{EnvBaseURL: "api.example.com"},
	},
	"`api_key = file(\"credentials.json\")`, or any value over 8000 characters (likewise `SHORTLINK_API_KEY`)": {
		assigns: map[string]string{"api_key": fmt.Sprintf("%q", strings.Repeat("k", 9843))}, // as quoted
	},
	"no `base_url` / `api_key` and no environment variable": {
		unset: []string{"base_url", "api_key"},
		env:   map[string]string{EnvBaseURL: "", EnvAPIKey: ""},
	},
}

// guideRowsOfWholeRuns are the rows whose input takes more than one plan
// (an import into a second resource), by the end-to-end test that holds
// them to the guide's quote.
var guideRowsOfWholeRuns = map[string]string{
	"an `import` block that brings a link another resource manages into a second resource": "TestLeftovers_importIntoASecondResourceFailsItsPlan",
}

// guideConfig writes a row's input as a configuration: the provider block
// and a link (or the data source the row names), each with the row's
// assignments (or guideInputsInWords') in place of the test's values, and
// the environment it needs. It is false for a row that sets anything else
// (an attribute the configuration cannot set) or whose input is neither
// written as assignments nor in guideInputsInWords.
func (e *testEnv) guideConfig(t *testing.T, row guideRow) (string, map[string]string, bool) {
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
	input, inWords := guideInputsInWords[row.input]
	if !inWords {
		input.assigns = row.assigns
	}
	if len(input.assigns)+len(input.unset) == 0 {
		return "", nil, false
	}
	for _, name := range input.unset {
		delete(providerAttrs, name)
	}
	for name, value := range input.assigns {
		switch {
		case strings.Contains(value, "("):
			return "", nil, false
		case isSetting[name]:
			providerAttrs[name] = value
		case canSet[name]:
			attrs[name] = value
		default:
			return "", nil, false
		}
	}
	return guideBlock(`provider "shortlink"`, providerAttrs) + guideBlock(header, attrs), input.env, true
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
// message: pieces are split at "…" and at the first ": ", white space is
// folded, and backquotes are not compared. Anything else the guide leaves
// out of a piece is missing.
func missingFromOutput(output, message string) string {
	fold := func(s string) string { return strings.Join(strings.Fields(strings.ReplaceAll(s, "`", "")), " ") }
	summary, detail, _ := strings.Cut(message, ": ")
	rest := fold(output)
	for piece := range strings.FieldsFuncSeq(summary+"…"+detail, func(r rune) bool { return r == '…' }) {
		piece = fold(piece)
		at := strings.Index(rest, piece)
		if at < 0 {
			return piece
		}
		rest = rest[at+len(piece):]
	}
	return ""
}

// TestAccTroubleshooting_guideQuotesThePlansErrors: each row of the
// troubleshooting guide's input table that quotes an error for a setting,
// a link's attribute or a data source's argument, written as it stands
// (or as guideInputsInWords writes it), fails the plan with that message.
func TestAccTroubleshooting_guideQuotesThePlansErrors(t *testing.T) {
	e := newTestEnv(t)
	rows := troubleshootingRows(t)
	for _, row := range rows {
		if _, elsewhere := guideRowsOfWholeRuns[row.input]; elsewhere {
			continue
		}
		config, env, ok := e.guideConfig(t, row)
		if !ok {
			t.Errorf("%s: the row %q quotes an error for an input this test cannot write: add it to guideInputsInWords", troubleshootingGuide, row.input)
			continue
		}
		t.Run(row.input, func(t *testing.T) {
			output := planFailureIn(t, config, env)
			if missing := missingFromOutput(output, row.message); missing != "" {
				t.Errorf("the guide quotes %q for\n%s\nbut the output lacks %q:\n%s", row.message, config, missing, output)
			}
		})
	}
	// The table's rows that quote an error, as the guide has them: fewer
	// means the table is read wrong, and the test checks nothing.
	if len(rows) < 31 {
		t.Fatalf("read %d rows of %s; the table has more", len(rows), troubleshootingGuide)
	}
}

// planFailureIn is planFailure in the environment env, where it sets any;
// a test that sets the environment cannot run beside others.
func planFailureIn(t *testing.T, config string, env map[string]string) string {
	t.Helper()
	if len(env) == 0 {
		return planFailure(t, config)
	}
	for name, value := range env {
		t.Setenv(name, value)
	}
	return planFailureOf(t, config, false)
}
