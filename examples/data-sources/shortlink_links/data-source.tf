# Every link of the account, oldest first (at most max_links, 10000 by
# default: every link returned is held in the plan and the state).
data "shortlink_links" "all" {}

# Only the links of one domain.
data "shortlink_links" "campaign_domain" {
  domain_id = "2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60"
}

# Only the spring campaign's links to the shop; the filters combine with AND.
data "shortlink_links" "spring_shop" {
  slug_prefix      = "spring-"
  destination_host = "shop.example.com"
}

output "short_urls" {
  value = { for link in data.shortlink_links.campaign_domain.links : link.slug => link.short_url }
}
