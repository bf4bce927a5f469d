# A spring campaign: one short link per landing page, all tagged with the same
# UTM parameters, the short URLs as an output for the newsletter team, and the
# clicks of each link.
#
# The provider reads SHORTLINK_BASE_URL and SHORTLINK_API_KEY from the
# environment, so the key never sits in this file.

terraform {
  required_providers {
    shortlink = {
      source  = "shortlink/shortlink"
      version = "~> 0.1" # any 0.x from 0.1; .terraform.lock.hcl (commit it) pins the exact build
    }
  }
}

provider "shortlink" {}

variable "domain_id" {
  description = "ID of the short-link domain (dashboard → Domains)."
  type        = string
}

variable "campaign" {
  description = "utm_campaign of every link."
  type        = string
  default     = "spring-2027"
}

variable "landing_pages" {
  description = "Slug → destination of each link."
  type        = map(string)
  default = {
    spring-sale = "https://shop.example.com/spring"
    newsletter  = "https://shop.example.com/newsletter"
    webinar     = "https://events.example.com/spring-webinar"
  }
}

resource "shortlink_link" "campaign" {
  for_each = var.landing_pages

  domain_id   = var.domain_id
  slug        = each.key
  destination = each.value
  expires_at  = "2027-06-30T23:59:59Z"

  utm = {
    source   = "newsletter"
    medium   = "email"
    campaign = var.campaign
  }
}

output "short_urls" {
  description = "Slug → short URL."
  value       = { for slug, link in shortlink_link.campaign : slug => link.short_url }
}

output "link_ids" {
  description = "Slug → link ID, for the analytics export."
  value       = { for slug, link in shortlink_link.campaign : slug => link.id }
}

# The clicks of every link of the account, counted by the provider as it
# reads the analytics export: the state keeps the counts, never the clicks.
# Read again on every plan: a click on one of the campaign's links changes
# the output "clicks", which `plan -detailed-exitcode` reports as a change
# (exit 2).
data "shortlink_clicks" "all" {}

output "clicks" {
  description = "Slug → clicks so far."
  value       = { for slug, link in shortlink_link.campaign : slug => lookup(data.shortlink_clicks.all.by_link, link.id, 0) }
}
