package provider

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Schema parity without the Terraform CLI: every schema's attribute names
// are exactly the tfsdk tags of the model the code reads it into, and the
// object types built by hand (utmAttrTypes, linkAttrTypes) are exactly the
// nested attributes of the schemas they fill. A mismatch would otherwise
// show only in an acceptance test, as a "Value Conversion Error".

// tfsdkTags are the tfsdk tags of a model struct, embedded structs
// included.
func tfsdkTags(model any) []string {
	var tags []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("tfsdk")
			switch {
			case f.Anonymous && tag == "":
				walk(f.Type)
			case tag != "" && tag != "-":
				tags = append(tags, tag)
			}
		}
	}
	walk(reflect.TypeOf(model))
	slices.Sort(tags)
	return tags
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func expectSameNames(t *testing.T, what string, schema, model []string) {
	t.Helper()
	if !slices.Equal(schema, model) {
		t.Errorf("%s: the schema has %s, the model %s", what, strings.Join(schema, ", "), strings.Join(model, ", "))
	}
}

func resourceSchema(t *testing.T, r resource.Resource) rschema.Schema {
	t.Helper()
	var resp resource.SchemaResponse
	r.Schema(context.Background(), resource.SchemaRequest{}, &resp)
	return schemaWithoutErrors(t, resp.Schema, resp.Diagnostics)
}

func dataSourceSchema(t *testing.T, d datasource.DataSource) dsschema.Schema {
	t.Helper()
	var resp datasource.SchemaResponse
	d.Schema(context.Background(), datasource.SchemaRequest{}, &resp)
	return schemaWithoutErrors(t, resp.Schema, resp.Diagnostics)
}

// schemaWithoutErrors is s, the schema of a resource or a data source,
// unless asking for it gave an error: the test cannot go on then.
func schemaWithoutErrors[S any](t *testing.T, s S, diags diag.Diagnostics) S {
	t.Helper()
	if diags.HasError() {
		t.Fatalf("schema: %v", diags)
	}
	return s
}

// names are a schema's attribute and block names together: the model
// holds both alike.
func names[A, B any](attributes map[string]A, blocks map[string]B) []string {
	all := append(sortedKeys(attributes), sortedKeys(blocks)...)
	slices.Sort(all)
	return all
}

func TestSchemaParity_resource(t *testing.T) {
	s := resourceSchema(t, NewLinkResource())
	expectSameNames(t, "shortlink_link", names(s.Attributes, s.Blocks), tfsdkTags(linkResourceModel{}))
	utm, ok := s.Attributes["utm"].(rschema.SingleNestedAttribute)
	if !ok {
		t.Fatalf("utm is a %T, want a single nested attribute", s.Attributes["utm"])
	}
	expectSameNames(t, "shortlink_link.utm", sortedKeys(utm.Attributes), tfsdkTags(utmModel{}))
	expectSameNames(t, "utmAttrTypes", sortedKeys(utm.Attributes), sortedKeys(utmAttrTypes))

	var identity resource.IdentitySchemaResponse
	NewLinkResource().(resource.ResourceWithIdentity).IdentitySchema(context.Background(), resource.IdentitySchemaRequest{}, &identity)
	expectSameNames(t, "shortlink_link identity", sortedKeys(identity.IdentitySchema.Attributes), tfsdkTags(linkIdentityModel{}))
}

func TestSchemaParity_dataSources(t *testing.T) {
	for _, c := range []struct {
		name  string
		ds    datasource.DataSource
		model any
	}{
		{"shortlink_link", NewLinkDataSource(), linkModel{}},
		{"shortlink_links", NewLinksDataSource(), linksDataSourceModel{}},
		{"shortlink_clicks", NewClicksDataSource(), clicksModel{}},
		{"shortlink_analytics_export", NewAnalyticsExportDataSource(), analyticsExportModel{}},
	} {
		s := dataSourceSchema(t, c.ds)
		expectSameNames(t, c.name, names(s.Attributes, s.Blocks), tfsdkTags(c.model))
	}
	// The links of shortlink_links are built from linkAttrTypes and
	// linkModel's values: all three name the same attributes.
	s := dataSourceSchema(t, NewLinksDataSource())
	links, ok := s.Attributes["links"].(dsschema.ListNestedAttribute)
	if !ok {
		t.Fatalf("links is a %T, want a list nested attribute", s.Attributes["links"])
	}
	expectSameNames(t, "shortlink_links.links", sortedKeys(links.NestedObject.Attributes), sortedKeys(linkAttrTypes))
	expectSameNames(t, "linkAttrTypes", sortedKeys(linkAttrTypes), tfsdkTags(linkModel{}))
	utm, ok := links.NestedObject.Attributes["utm"].(dsschema.SingleNestedAttribute)
	if !ok {
		t.Fatalf("links.utm is a %T, want a single nested attribute", links.NestedObject.Attributes["utm"])
	}
	expectSameNames(t, "shortlink_links.links.utm", sortedKeys(utm.Attributes), sortedKeys(utmAttrTypes))
	ut, ok := linkAttrTypes["utm"].(types.ObjectType)
	if !ok {
		t.Fatalf("linkAttrTypes[utm] is a %T, want an object type", linkAttrTypes["utm"])
	}
	expectSameNames(t, "linkAttrTypes.utm", sortedKeys(ut.AttrTypes), sortedKeys(utmAttrTypes))
}

func TestSchemaParity_listResourceAndProvider(t *testing.T) {
	var lr list.ListResourceSchemaResponse
	NewLinkListResource().ListResourceConfigSchema(context.Background(), list.ListResourceSchemaRequest{}, &lr)
	expectSameNames(t, "list shortlink_link config", names(lr.Schema.Attributes, lr.Schema.Blocks), tfsdkTags(linkListModel{}))

	var pr provider.SchemaResponse
	New("test")().Schema(context.Background(), provider.SchemaRequest{}, &pr)
	expectSameNames(t, "provider", names(pr.Schema.Attributes, pr.Schema.Blocks), tfsdkTags(providerModel{}))
}

// The list resource's page is rendered by tfplugindocs only with Terraform
// 1.14 and later, which CI does not run; with an older CLI scripts/docs.sh
// keeps it as it is. So that it never falls behind the schema, its
// description and each attribute's line must say what the schema says.
func TestSchemaParity_listResourcePage(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "list-resources", "link.md"))
	if err != nil {
		t.Fatal(err)
	}
	var lr list.ListResourceSchemaResponse
	NewLinkListResource().ListResourceConfigSchema(context.Background(), list.ListResourceSchemaRequest{}, &lr)
	text := string(page)
	if !strings.Contains(text, "\n"+lr.Schema.MarkdownDescription+"\n") {
		t.Errorf("docs/list-resources/link.md does not give the list resource's description:\n%s", lr.Schema.MarkdownDescription)
	}
	var documented []string
	for _, line := range strings.Split(text, "\n") {
		name, description, ok := documentedAttribute(line)
		if !ok {
			continue
		}
		documented = append(documented, name)
		if a, found := lr.Schema.Attributes[name]; found && description != a.GetMarkdownDescription() {
			t.Errorf("docs/list-resources/link.md says of %s:\n%s\nthe schema:\n%s", name, description, a.GetMarkdownDescription())
		}
	}
	slices.Sort(documented)
	expectSameNames(t, "docs/list-resources/link.md", sortedKeys(lr.Schema.Attributes), documented)
}

// documentedAttribute reads a line of a page's schema as tfplugindocs
// writes it: "- `name` (Type) Description".
func documentedAttribute(line string) (name, description string, ok bool) {
	rest, ok := strings.CutPrefix(line, "- `")
	if !ok {
		return "", "", false
	}
	name, rest, ok = strings.Cut(rest, "` (")
	if !ok {
		return "", "", false
	}
	_, description, ok = strings.Cut(rest, ") ")
	return name, description, ok
}
