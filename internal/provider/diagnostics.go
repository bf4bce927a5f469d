package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
)

// serviceFieldAttributes maps the service's field names, as they appear in
// its messages, to the attributes of shortlink_link.
var serviceFieldAttributes = map[string]string{
	"destination": "destination",
	"domainId":    "domain_id",
	"domain_id":   "domain_id",
	"slug":        "slug",
	"expiresAt":   "expires_at",
	"expires_at":  "expires_at",
	"utm":         "utm",
}

// addServiceError turns an error of the client into a diagnostic that says
// what happened and what to do, on the attribute it concerns where there is
// one. action says what the provider was doing ("create the link").
func addServiceError(diags *diag.Diagnostics, action string, err error) {
	summary := "Could not " + action
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) {
		diags.AddError(summary, plainErrorDetail(err))
		return
	}
	detail := serviceErrorDetail(apiErr)
	if attr := attributeOf(apiErr); attr != "" {
		diags.AddAttributeError(path.Root(attr), summary, detail)
		return
	}
	diags.AddError(summary, detail)
}

// plainErrorDetail explains an error that carries no answer of the service.
func plainErrorDetail(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return err.Error() + "\n\nThe operation ran out of time. Raise the resource's timeouts, or lower Terraform's -parallelism so fewer requests wait for the rate limit."
	case errors.Is(err, client.ErrAmbiguous):
		return err.Error() + "\n\nThe request may or may not have reached the service. Run the command again: the provider looks for a link the failed attempt created before it creates one."
	case errors.Is(err, errNoSuchLink):
		return err.Error()
	}
	return err.Error() + "\n\nCheck that base_url points at the service and that it is reachable, then run the command again."
}

// attributeOf names the attribute an error is about, if any.
func attributeOf(e *client.APIError) string {
	switch {
	case errors.Is(e, client.ErrBlocked):
		return "destination"
	case errors.Is(e, client.ErrConflict):
		return "slug"
	case errors.Is(e, client.ErrInvalidRequest):
		field, _, found := strings.Cut(e.Message, ":")
		if !found {
			return ""
		}
		return serviceFieldAttributes[strings.TrimSpace(field)]
	}
	return ""
}

func serviceErrorDetail(e *client.APIError) string {
	said := serviceSaid(e)
	switch {
	case errors.Is(e, client.ErrUnauthorized):
		return "The service rejected the API key (401 invalid_api_key)" + said + ". Check that api_key (or " + EnvAPIKey + ") holds a current key from the dashboard's API-key section, that the key was not revoked, and that the account's plan still includes the API."
	case errors.Is(e, client.ErrForbidden):
		return fmt.Sprintf("The API key lacks the scope this operation needs (403 insufficient_scope): %s needs %s%s. Terraform needs a key with both links:read (every refresh and import lists the links) and links:write (create, change, delete).", e.Method+" "+e.Path, scopeFor(e.Method), said)
	case errors.Is(e, client.ErrBlocked):
		return "The service's fraud filter rejected the destination (422 blocked_by_filter)" + said + ". Choose another destination; if it is legitimate, ask the service's support to review it."
	case errors.Is(e, client.ErrQuota):
		return "The plan's monthly link quota is exhausted (402 link_quota)" + said + ". Wait for the next month, delete unused links or upgrade the plan; nothing was changed."
	case errors.Is(e, client.ErrConflict):
		return "The slug is already taken on this domain (409 " + codeOr(e, "slug_taken") + ")" + said + ". Choose another slug, or import the existing link with `terraform import` using <domain_id>/<slug>."
	case errors.Is(e, client.ErrInvalidRequest):
		return "The service refused the request (400 " + codeOr(e, "invalid_request") + ")" + said + "."
	case errors.Is(e, client.ErrRateLimited):
		return "The service kept answering 429 rate_limited after every retry" + said + ". Lower Terraform's -parallelism, raise max_retries, or run again once the rate-limit window has passed."
	case errors.Is(e, client.ErrNotFound):
		return "The link no longer exists on the service (404 not_found)" + said + ". It was probably deleted outside Terraform; run `terraform apply` again to recreate it."
	}
	return fmt.Sprintf("The service answered %d%s. This may be temporary: run the command again.", e.StatusCode, said)
}

func serviceSaid(e *client.APIError) string {
	switch {
	case e.Message != "":
		return fmt.Sprintf("; the service said: %q", e.Message)
	case e.PageText != "":
		return "; the answer was an HTML page (from the service or a proxy in front of it), which says: " + e.PageText
	case e.Body != "":
		return fmt.Sprintf("; the service sent a body that is not JSON, beginning %q", e.Body)
	}
	return ""
}

func codeOr(e *client.APIError, fallback string) string {
	if e.Code != "" {
		return e.Code
	}
	return fallback
}

func scopeFor(method string) string {
	if method == "GET" {
		return "links:read"
	}
	return "links:write"
}
