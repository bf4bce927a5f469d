# Every link of the account, oldest first.
data "shortlink_links" "all" {}

# Only the links of one domain.
data "shortlink_links" "campaign_domain" {
  domain_id = "2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60"
}

output "short_urls" {
  value = { for link in data.shortlink_links.campaign_domain.links : link.slug => link.short_url }
}
