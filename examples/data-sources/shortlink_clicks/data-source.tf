# Every click the export holds: in total, per link, per UTC day, and the
# most frequent referrers.
data "shortlink_clicks" "all" {}

# March 2027. since is inclusive and until exclusive, so consecutive months
# never count a click twice.
data "shortlink_clicks" "march" {
  since = "2027-03-01T00:00:00Z"
  until = "2027-04-01T00:00:00Z"
}

# One link over the last 30 days. plantimestamp() (Terraform 1.5 and later,
# OpenTofu 1.6 and later) is known while planning (timestamp() is not,
# which would put off the read until apply).
data "shortlink_clicks" "spring_last_30_days" {
  link_id = "7d0c5a52-3c1e-4f7b-a1d2-5e6f7a8b9c0d" # e.g. shortlink_link.spring.id
  since   = timeadd(plantimestamp(), "-720h")
}

# The links of a campaign, and their clicks in March as outputs. A link
# without clicks is absent from by_link, hence lookup(…, 0).
resource "shortlink_link" "campaign" {
  for_each = {
    spring-sale = "https://shop.example.com/spring"
    newsletter  = "https://shop.example.com/newsletter"
  }

  domain_id   = "2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60"
  slug        = each.key
  destination = each.value
}

output "march_clicks_per_link" {
  description = "Slug → clicks in March."
  value       = { for slug, link in shortlink_link.campaign : slug => lookup(data.shortlink_clicks.march.by_link, link.id, 0) }
}

output "march_clicks_per_day" {
  description = "YYYY-MM-DD (UTC) → clicks, days with clicks only."
  value       = data.shortlink_clicks.march.by_day
}

output "march_top_referrers" {
  description = "The ten most frequent referrers in March: [{ referrer, clicks }], most clicks first."
  value       = data.shortlink_clicks.march.top_referrers
}

output "spring_last_click_at" {
  description = "When spring was last clicked in the last 30 days; null if it was not."
  value       = data.shortlink_clicks.spring_last_30_days.last_click_at
}
