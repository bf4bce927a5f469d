// Package provider is the Terraform glue of the short-link provider: schemas,
// plans and state. Every request to the service goes through internal/client.
package provider

import (
	"context"
	"fmt"
	"math"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/defaults"
	"github.com/shortlink/terraform-provider-shortlink/internal/links"
	"github.com/shortlink/terraform-provider-shortlink/internal/snapshot"
	"github.com/shortlink/terraform-provider-shortlink/internal/validate"
)

// Address is the provider's registry address.
const Address = "registry.terraform.io/shortlink/shortlink"

// Environment variables read when the provider block leaves a setting out.
const (
	EnvBaseURL = "SHORTLINK_BASE_URL"
	EnvAPIKey  = "SHORTLINK_API_KEY"
)

var (
	_ provider.Provider                  = (*shortlinkProvider)(nil)
	_ provider.ProviderWithListResources = (*shortlinkProvider)(nil)
)

type shortlinkProvider struct {
	version string
	// stop is begun by the server when Terraform stops the provider.
	stop *client.Stop
	// guard is told the key, which the server then keeps out of every answer.
	guard *keyGuard
}

type providerModel struct {
	BaseURL         types.String `tfsdk:"base_url"`
	APIKey          types.String `tfsdk:"api_key"`
	MaxRetries      types.Number `tfsdk:"max_retries"`
	BulkRefresh     types.Bool   `tfsdk:"bulk_refresh"`
	StopGracePeriod types.String `tfsdk:"stop_grace_period"`
	AdoptionWindow  types.String `tfsdk:"adoption_window"`
	MaxRatePercent  types.Number `tfsdk:"max_rate_limit_percent"`
}

// Bounds of the duration settings, checked at plan time.
const (
	maxStopGracePeriod = 10 * time.Minute
	maxAdoptionWindow  = 30 * 24 * time.Hour
)

// New returns a constructor of the provider, as providerserver wants.
// NewServer is what Terraform runs: it also tells the provider when
// Terraform stops it.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return newProvider(version, client.NewStop(), &keyGuard{}) }
}

func newProvider(version string, stop *client.Stop, guard *keyGuard) *shortlinkProvider {
	return &shortlinkProvider{version: version, stop: stop, guard: guard}
}

func (p *shortlinkProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "shortlink"
	resp.Version = p.version
}

func (p *shortlinkProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Manages short links of the short-link service: create, re-target in place and delete them, and read their click analytics.",
		Attributes: map[string]schema.Attribute{
			"base_url": schema.StringAttribute{
				MarkdownDescription: "Base URL of the service, such as `https://api.example.com`. May also be set with the `" + EnvBaseURL + "` environment variable.",
				Optional:            true,
			},
			"api_key": schema.StringAttribute{
				MarkdownDescription: "API key from the API-key section of the dashboard. It needs the scopes `links:read` (every refresh lists links) and `links:write`. May also be set with the `" + EnvAPIKey + "` environment variable, which keeps it out of the configuration.",
				Optional:            true,
				Sensitive:           true,
			},
			"max_retries": schema.NumberAttribute{
				MarkdownDescription: fmt.Sprintf("How often a request is retried after a 5xx answer or a network error before the operation fails. Defaults to %d. A service that cannot be reached at all is tried for %s at most, or until a request has used these retries; then every operation of the run fails with one error. A request refused with a 429 is not counted here: it is sent again when the service says, for as long as its operation's timeout allows (a read, which has none, waits at most %s). A create is never re-sent blindly: after an ambiguous failure the provider first looks for the link it may have created.", client.DefaultMaxRetries, client.DefaultUnreachableAfter, defaults.ReadTimeout),
				Optional:            true,
				Validators:          []validator.Number{validate.WholeNumber(0, 100)},
			},
			"bulk_refresh": schema.BoolAttribute{
				MarkdownDescription: fmt.Sprintf("The service has no way to read one link, only to list them all. With `bulk_refresh` (the default, `true`), one listing of the account's links serves every refresh of a Terraform run: the first refresh lists, concurrent ones wait for that same request, and later ones are served from it for %s after it came in, updated by this provider's own creates, changes and deletes. A link missing from a listing is looked for in further fresh listings (shared by every refresh that missed a link), %d at most, before it is reported deleted, since a listing whose pages shift under another client's deletes can skip a link; if none settles it, the state keeps the link and says it was not refreshed. Set it to `false` to list the links again for every resource.", snapshot.DefaultLifetime, snapshot.MaxLooks),
				Optional:            true,
			},
			"stop_grace_period": schema.StringAttribute{
				MarkdownDescription: fmt.Sprintf("When Terraform is interrupted (the first Ctrl-C, or a CI runner's SIGINT or SIGTERM), the provider sends nothing new, ends waits for the rate limit at once, and lets creates, changes and deletes already sent to the service run on for this long, so that their results reach the state instead of being carried out by the service unrecorded. A duration such as `\"5s\"`; defaults to `%q`, which fits a runner that sends a harder signal 7.5 s after the first (GitHub Actions, by its documentation; the interrupted-runs guide says how the signal reaches Terraform). `\"0s\"` abandons writes at once; at most %s.", client.DefaultStopGrace.String(), maxStopGracePeriod),
				Optional:            true,
				Validators:          []validator.String{validate.Duration(0, maxStopGracePeriod)},
			},
			"max_rate_limit_percent": schema.NumberAttribute{
				MarkdownDescription: "The service's rate limits are counted per API key. When the key is shared with integrations that must keep part of every window (a dashboard sync, another team's pipeline), this caps the part of each window, for reads and for writes alike, that one run of this provider uses: with `50` and an allowance of 60 writes a minute, a run sends at most 30 writes in each window as it places the windows from the service's answers (whole seconds: on a heavily loaded machine a write of the next part can arrive in the last moment of the window before), whatever the service says remains, and waits for the next window for the rest. A whole number from 1 to 100; defaults to 100 (no cap).",
				Optional:            true,
				Validators:          []validator.Number{validate.WholeNumber(1, 100)},
			},
			"adoption_window": schema.StringAttribute{
				MarkdownDescription: fmt.Sprintf("A run killed after sending a create (SIGKILL, a lost runner) leaves a link on the service that no state records. When a later create meets `409 slug_taken` and the link holding the slug is exactly what the resource declares (domain, slug, destination, expiry; UTM parameters none yet or the resource's own), no other resource of the same apply created or took it over, and it was created within this window, the resource takes it over, with a warning naming it (the plan warns beforehand). An older link is left alone: it is more likely another configuration's. A duration such as `\"24h\"`; defaults to `%q`; `\"0s\"` never takes one over.", links.FormatDuration(links.DefaultAdoptionWindow)),
				Optional:            true,
				Validators:          []validator.String{validate.Duration(0, maxAdoptionWindow)},
			},
		},
	}
}

func (p *shortlinkProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	baseURL := settingOrEnv(cfg.BaseURL, EnvBaseURL)
	apiKey := settingOrEnv(cfg.APIKey, EnvAPIKey)
	warnIfEmptyTakenFromEnv(&resp.Diagnostics, cfg.BaseURL, "base_url", EnvBaseURL, "the base URL")
	warnIfEmptyTakenFromEnv(&resp.Diagnostics, cfg.APIKey, "api_key", EnvAPIKey, "the API key")
	warnIfKeyInProtocolDumps(&resp.Diagnostics, cfg.APIKey)
	// A setting known at plan is checked there, even beside one that is
	// known only after another resource is applied.
	if !cfg.APIKey.IsUnknown() {
		p.guard.set(apiKey)
		checkSetting(&resp.Diagnostics, cfg.APIKey, apiKey, "api_key", EnvAPIKey, "an API key from the dashboard's API-key section", client.CheckAPIKey)
	}
	if !cfg.BaseURL.IsUnknown() {
		checkSetting(&resp.Diagnostics, cfg.BaseURL, baseURL, "base_url", EnvBaseURL, "the service's base URL", client.CheckBaseURL)
	}
	if !resp.Diagnostics.HasError() && !cfg.BaseURL.IsUnknown() && !cfg.APIKey.IsUnknown() {
		if err := client.CheckKeyOutOfBaseURL(baseURL, apiKey); err != nil {
			addInvalidSetting(&resp.Diagnostics, "base_url", EnvBaseURL, err, isUnset(cfg.BaseURL))
		}
	}
	if resp.Diagnostics.HasError() || cfg.BaseURL.IsUnknown() || cfg.APIKey.IsUnknown() {
		// An unknown one: resources are planned as unknown and configured on apply.
		return
	}
	maxRetries := int(wholeSetting(cfg.MaxRetries, client.DefaultMaxRetries))
	p.stop.SetGrace(durationSetting(cfg.StopGracePeriod, client.DefaultStopGrace))
	c, err := client.New(client.Config{
		BaseURL:    baseURL,
		APIKey:     apiKey,
		Stop:       p.stop,
		UserAgent:  fmt.Sprintf("terraform-provider-shortlink/%s (+https://registry.terraform.io/providers/shortlink/shortlink; Terraform %s)", p.version, req.TerraformVersion),
		MaxRetries: &maxRetries,
		// Unset reads as 0, which the client takes as no cap.
		MaxRateShare: float64(wholeSetting(cfg.MaxRatePercent, 0)) / 100,
	})
	if err != nil {
		// Both settings were checked above: what is left is a defect.
		addClientRefused(&resp.Diagnostics, err)
		return
	}
	lifetime := snapshot.DefaultLifetime
	if !cfg.BulkRefresh.IsNull() && !cfg.BulkRefresh.IsUnknown() && !cfg.BulkRefresh.ValueBool() {
		lifetime = 0
	}
	listing := snapshot.New(c.ListLinks, lifetime)
	data := &providerData{
		client:  c,
		listing: listing,
		creator: links.NewCreator(c, listing, maxRetries, createRetryWait, durationSetting(cfg.AdoptionWindow, links.DefaultAdoptionWindow)),
		plans:   links.NewPlans(),
		stop:    p.stop,
		reports: &reports{},
	}
	resp.ResourceData = data
	resp.DataSourceData = data
	resp.ListResourceData = data
}

// createRetryWait is the first wait before a create is sent again after an
// ambiguous failure that left no link; it doubles with every attempt.
const createRetryWait = time.Second

// wholeSetting reads a whole-number setting (validate.WholeNumber checked
// it), or fallback when it is not set.
func wholeSetting(v types.Number, fallback int64) int64 {
	if v.IsNull() || v.IsUnknown() {
		return fallback
	}
	n, ok := validate.Whole(v.ValueBigFloat(), math.MinInt64, math.MaxInt64)
	if !ok {
		return fallback
	}
	return n
}

// durationSetting is a duration attribute's value, or fallback when it is
// not set. The value was validated at plan time.
func durationSetting(v types.String, fallback time.Duration) time.Duration {
	if v.IsNull() || v.IsUnknown() {
		return fallback
	}
	d, err := time.ParseDuration(v.ValueString())
	if err != nil {
		return fallback
	}
	return d
}

// EnvProtocolDataDir is terraform-plugin-go's debugging switch: it writes
// every message Terraform sends the provider, its configuration included,
// to files in the directory it names, before any code of the provider
// sees them.
const EnvProtocolDataDir = "TF_LOG_SDK_PROTO_DATA_DIR"

// warnIfKeyInProtocolDumps says when the provider block's own api_key has
// gone to those files in clear, where none of the provider's redaction
// reaches. A key from SHORTLINK_API_KEY travels in no message.
func warnIfKeyInProtocolDumps(diags *diag.Diagnostics, setting types.String) {
	dir := os.Getenv(EnvProtocolDataDir)
	if dir == "" || setting.IsNull() || setting.IsUnknown() || setting.ValueString() == "" {
		return
	}
	addKeyInProtocolDumps(diags, EnvProtocolDataDir, dir, EnvAPIKey)
}

// checkSetting reports a setting that is missing (what it should hold) or
// that check refuses, on the setting or on its environment variable.
func checkSetting(diags *diag.Diagnostics, setting types.String, value, name, env, what string, check func(string) error) {
	if value == "" {
		addMissingSetting(diags, name, env, what)
	} else if err := check(value); err != nil {
		addInvalidSetting(diags, name, env, err, isUnset(setting))
	}
}

// warnIfEmptyTakenFromEnv says when a setting written empty (a variable
// left at a default of "") is taken from its environment variable: beside
// provider blocks for other accounts, that may be another account's.
func warnIfEmptyTakenFromEnv(diags *diag.Diagnostics, setting types.String, name, env, what string) {
	if !setting.IsNull() && !setting.IsUnknown() && setting.ValueString() == "" && os.Getenv(env) != "" {
		addEmptySettingFromEnv(diags, name, env, what)
	}
}

// isUnset reports whether a setting is left to its environment variable.
func isUnset(v types.String) bool { return v.IsNull() || v.ValueString() == "" }

func settingOrEnv(v types.String, env string) string {
	if !v.IsNull() && !v.IsUnknown() && v.ValueString() != "" {
		return v.ValueString()
	}
	return os.Getenv(env)
}

func (p *shortlinkProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{NewLinkResource}
}

// ListResources are what `terraform query` can list (Terraform 1.14 and
// later).
func (p *shortlinkProvider) ListResources(context.Context) []func() list.ListResource {
	return []func() list.ListResource{NewLinkListResource}
}

func (p *shortlinkProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{NewLinksDataSource, NewLinkDataSource, NewAnalyticsExportDataSource, NewClicksDataSource}
}

// providerData is what Configure hands to resources and data sources: one
// client, one shared listing of the links and one creator per provider
// instance, so that rate limits, listings and the links held are shared by
// all operations of a Terraform run.
type providerData struct {
	client *client.Client
	// listing is the account's links as last listed (not named links,
	// which would shadow the package internal/links at every use).
	listing *snapshot.Snapshot
	creator *links.Creator
	// plans are the creates this walk's plans declared (Terraform
	// configures the provider anew for every walk).
	plans *links.Plans
	stop  *client.Stop
	// reports are the conclusions this walk has explained in full once.
	reports *reports
}

// reports remembers which conclusions, met by many resources, a walk has
// explained, and where: the first explains, the others point to it.
type reports struct {
	mu       sync.Mutex
	explains map[string]string // conclusion → the object whose message explains it
}

// claim returns the object that explains key: who, if none did before
// (first).
func (r *reports) claim(key, who string) (explainer string, first bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if explainer, ok := r.explains[key]; ok {
		return explainer, false
	}
	if r.explains == nil {
		r.explains = map[string]string{}
	}
	r.explains[key] = who
	return who, true
}

// operation returns the context of one create, change or delete: bounded by
// the resource's timeout, and ended when Terraform stops the provider (the
// client then sends nothing new, and lets a write already sent finish
// within stop_grace_period). done, deferred, ends it and tells the user in
// diags when it waited long for the rate limit.
func (d *providerData) operation(ctx context.Context, timeout time.Duration, diags *diag.Diagnostics) (_ context.Context, done func()) {
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	ctx, unbind := d.stop.Bind(ctx)
	ctx, told := trackWaits(ctx, diags, addRateLimitWait)
	return ctx, func() {
		unbind()
		cancelTimeout()
		told()
	}
}

// trackReadWaits returns the context of a read (a refresh, a data source);
// done, deferred, tells the user in diags when it waited long for the read
// rate limit. One listing serves every read of a run and is waited for by
// the read that started it, so the run says so once.
func trackReadWaits(ctx context.Context, diags *diag.Diagnostics) (_ context.Context, done func()) {
	return trackWaits(ctx, diags, addReadRateLimitWait)
}

// trackExportReadWaits is trackReadWaits for the data sources that read
// the analytics export, whose wait is rarely a listing's.
func trackExportReadWaits(ctx context.Context, diags *diag.Diagnostics) (_ context.Context, done func()) {
	return trackWaits(ctx, diags, addExportReadRateLimitWait)
}

// trackWaits has done warn in diags when the requests of ctx waited long
// for the rate limit.
func trackWaits(ctx context.Context, diags *diag.Diagnostics, warn func(*diag.Diagnostics, client.WaitSum)) (_ context.Context, done func()) {
	ctx, waits := client.TrackWaits(ctx)
	return ctx, func() {
		if sum := waits.Sum(); sum.Total > client.LongWait {
			warn(diags, sum)
		}
	}
}

// configuredDataSource is embedded by every data source: it keeps what the
// provider's Configure hands over.
type configuredDataSource struct{ data *providerData }

func (d *configuredDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

// providerDataFrom unpacks what Configure handed over; nil before Configure.
func providerDataFrom(data any, diags interface{ AddError(string, string) }) *providerData {
	if data == nil {
		return nil
	}
	pd, ok := data.(*providerData)
	if !ok {
		addUnexpectedProviderData(diags, data)
		return nil
	}
	return pd
}
