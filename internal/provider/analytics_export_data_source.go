package provider

import (
	"bytes"
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/validate"
)

var (
	_ datasource.DataSource              = (*analyticsExportDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*analyticsExportDataSource)(nil)
)

// NewAnalyticsExportDataSource is shortlink_analytics_export.
func NewAnalyticsExportDataSource() datasource.DataSource { return &analyticsExportDataSource{} }

type analyticsExportDataSource struct {
	data *providerData
}

type analyticsExportModel struct {
	LinkID   types.String `tfsdk:"link_id"`
	CSV      types.String `tfsdk:"csv"`
	Columns  types.List   `tfsdk:"columns"`
	Rows     types.List   `tfsdk:"rows"`
	RowCount types.Int64  `tfsdk:"row_count"`
}

var exportRowType = types.MapType{ElemType: types.StringType}

func (d *analyticsExportDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_analytics_export"
}

func (d *analyticsExportDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The click statistics of the account, or of one link, from the service's CSV analytics export. " +
			"Needs the scope `links:read`. The export is read again on every plan; how far back it reaches depends on the account's plan. " +
			"A link's click history survives a change of its destination.",
		Attributes: map[string]schema.Attribute{
			"link_id": schema.StringAttribute{
				MarkdownDescription: "Only the clicks of this link (its `id`, a UUID). Omit it for every link of the account. A link that does not exist on the account is an error.",
				Optional:            true,
				Validators:          []validator.String{validate.UUID()},
			},
			"csv": schema.StringAttribute{
				MarkdownDescription: "The export as the service sent it (CSV with a header row), for `local_file` or further processing.",
				Computed:            true,
			},
			"columns": schema.ListAttribute{
				MarkdownDescription: "The column names of the header row, in order. Empty when the service sent an empty body.",
				Computed:            true,
				ElementType:         types.StringType,
			},
			"rows": schema.ListAttribute{
				MarkdownDescription: "One map per row of the export (one click), from column name to value, in the order of the export. The columns are the service's; see `columns`.",
				Computed:            true,
				ElementType:         exportRowType,
			},
			"row_count": schema.Int64Attribute{
				MarkdownDescription: "The number of rows (clicks), without the header row.",
				Computed:            true,
			},
		},
	}
}

func (d *analyticsExportDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *analyticsExportDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var cfg analyticsExportModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !configured(d.data, &resp.Diagnostics) {
		return
	}
	linkID := cfg.LinkID.ValueString()
	body, err := d.data.client.ExportAnalytics(ctx, linkID)
	if err != nil {
		if linkID != "" && client.IsNotFound(err) {
			resp.Diagnostics.AddAttributeError(path.Root("link_id"), "Could not export the analytics",
				fmt.Sprintf("No link with ID %s exists on this account (404 not_found): %v. Check link_id; the account's links are listed by data.shortlink_links, and a link managed here is referenced as shortlink_link.<name>.id.", linkID, err))
			return
		}
		addServiceError(&resp.Diagnostics, "export the analytics", err)
		return
	}
	if !utf8.Valid(body) {
		resp.Diagnostics.AddError("Could not read the analytics export",
			"The service sent an export that is not UTF-8 text, which Terraform cannot hold in a string. Please report this to the service's support.")
		return
	}
	columns, rows, err := parseExport(body)
	if err != nil {
		resp.Diagnostics.AddError("Could not read the analytics export",
			fmt.Sprintf("The service's answer to GET /api/analytics/export cannot be read as CSV with a header row: %v. Please report this to the provider's developers, with the beginning of the export.", err))
		return
	}

	cfg.CSV = types.StringValue(string(body))
	colValues := make([]attr.Value, len(columns))
	for i, c := range columns {
		colValues[i] = types.StringValue(c)
	}
	cfg.Columns = types.ListValueMust(types.StringType, colValues)
	rowValues := make([]attr.Value, len(rows))
	for i, row := range rows {
		cells := make(map[string]attr.Value, len(row))
		for k, v := range row {
			cells[k] = types.StringValue(v)
		}
		rowValues[i] = types.MapValueMust(types.StringType, cells)
	}
	cfg.Rows = types.ListValueMust(exportRowType, rowValues)
	cfg.RowCount = types.Int64Value(int64(len(rows)))
	resp.Diagnostics.Append(resp.State.Set(ctx, &cfg)...)
}

// parseExport reads the export with client.ParseExport. A body without
// even a header row (empty, or only white space) is read as an export
// without clicks: a service may well answer so when there are none.
func parseExport(body []byte) (columns []string, rows []map[string]string, err error) {
	if len(bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\uFEFF")))) == 0 {
		return []string{}, []map[string]string{}, nil
	}
	return client.ParseExport(body)
}
