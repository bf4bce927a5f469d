// Package emulator is a faithful, in-memory implementation of the short-link
// service's public API. It is the backend of every
// provider test, of the benchmarks and of `make demo`, and users run it (through
// cmd/shortlink-emulator) to try the provider without an account.
//
// The specification leaves many things "not shown". For each of them the
// emulator answers one canonical way (see DESIGN.md) and can be
// switched to the other reasonable answers through Settings.Variants, so the
// provider's tests prove it copes with each.
//
// Canonical behaviour, in short:
//
//   - POST /api/links → 201 with the link; GET /api/links → 200 with a bare
//     array of every link of the account, oldest first; PATCH
//     /api/links/{id} → 200 with the link; DELETE /api/links/{id} → 204;
//     GET /api/analytics/export → 200 text/csv.
//   - Link object: id, destination, domainId, slug, shortUrl
//     (https://<domain host>/<slug>), qrCodeUrl, expiresAt (or null), utm
//     (object or null), createdAt, updatedAt. Timestamps are UTC with
//     milliseconds and a Z suffix.
//   - Errors: {"error": "<code>", "message": "<human text>"}.
//   - Checks run in this order: authentication (401), scope (403), rate limit
//     (429), then the request itself (400, 402, 404, 409, 422).
//   - Rate limits: fixed windows per key and per class (write: POST, PATCH,
//     DELETE; read: GET), 60 and 600 requests per 60 s window by default. A
//     request answered 429 does not consume the allowance. Every API response,
//     401 and 403 included, carries X-RateLimit-Limit, X-RateLimit-Remaining
//     and X-RateLimit-Reset (whole seconds, rounded up); a 429 also carries
//     Retry-After.
//   - Scopes: links:write does not imply links:read.
//   - Slugs: 1–64 characters of [A-Za-z0-9_-], unique per domain; generated
//     as 7 characters of [A-Za-z0-9] when omitted.
//   - PATCH takes {"destination", "utm"?}: an omitted utm keeps the link's
//     UTM parameters, "utm": null or {} clears them. Both create and change of
//     destination run through the fraud filter (delay, then blocked list).
//   - Monthly quota: counted on create, per account; exhausted → 402.
//
// Short links are addressed locally in two ways: a request whose Host header
// is a domain's host (GET /<slug>), and a path form for curl,
// GET /r/<domain host>/<slug>. Both record a click and answer 302 to the
// current destination; an expired link answers 410, an unknown one 404.
//
// The export is CSV (RFC 4180) with the header row
// clicked_at,link_id,slug,short_url,destination,referrer,user_agent
// and one row per click, oldest first. destination is where that click was
// sent, so the history of a link survives a change of destination; clicks of
// deleted links stay in the account-wide export.
package emulator
