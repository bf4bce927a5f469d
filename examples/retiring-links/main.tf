# Retiring short links without breaking the ones still in use. A link is
# deleted by listing its slug in var.retire, but while it got clicks in the
# last 14 days the plan fails and nothing is deleted, unless force_retire is
# set. The links that would be deleted are found on the service (a retired
# link that is already gone is simply not found), and their recent clicks
# are checked by a postcondition of data.shortlink_clicks, which Terraform
# evaluates while planning.
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

variable "landing_pages" {
  description = "Slug → destination of every link, retired ones included."
  type        = map(string)
  default = {
    spring-sale = "https://shop.example.com/spring"
    newsletter  = "https://shop.example.com/newsletter"
    webinar     = "https://events.example.com/spring-webinar"
  }
}

variable "retire" {
  description = "Slugs of the links to delete. A link clicked in the last 14 days is not deleted: the plan fails."
  type        = set(string)
  default     = []
}

variable "force_retire" {
  description = "Delete the links in retire even if they are still clicked."
  type        = bool
  default     = false
}

resource "shortlink_link" "campaign" {
  for_each = { for slug, destination in var.landing_pages : slug => destination if !contains(var.retire, slug) }

  domain_id   = var.domain_id
  slug        = each.key
  destination = each.value
}

# The links this plan deletes: those of the domain whose slug is in retire.
data "shortlink_links" "domain" {
  domain_id = var.domain_id
}

locals {
  retiring = { for link in data.shortlink_links.domain.links : link.slug => link.id if contains(var.retire, link.slug) }
}

data "shortlink_clicks" "last_14_days" {
  since = timeadd(plantimestamp(), "-336h")

  lifecycle {
    postcondition {
      condition     = var.force_retire || alltrue([for slug, id in local.retiring : lookup(self.by_link, id, 0) == 0])
      error_message = "Still in use, not deleted: ${join(", ", [for slug, id in local.retiring : "${slug} (clicks in the last 14 days: ${lookup(self.by_link, id, 0)})" if lookup(self.by_link, id, 0) > 0])}. Take them out of retire, or set force_retire = true."
    }
  }
}

output "clicks_last_14_days" {
  description = "Slug → clicks in the last 14 days, for the links that stay."
  value       = { for slug, link in shortlink_link.campaign : slug => lookup(data.shortlink_clicks.last_14_days.by_link, link.id, 0) }
}
