# Short links kept in a spreadsheet, one row a link, exported as CSV
# (links.csv beside this file): edit the sheet, export it again, plan,
# apply. A changed destination or UTM value is changed in place (the short
# URL, QR code and clicks stay); a changed expiry replaces the link, and
# the plan warns of it on expires_at. A changed slug is another row (rows
# are keyed by slug): the old link is deleted, with its short URL and
# clicks, and a new one created, with no warning. A row removed from the
# sheet deletes its link.
#
# Sheets leave stray spaces and blank cells: every cell is trimmed, and a
# blank one means "not set" (null). The provider refuses a destination or
# UTM value with white space at its ends, and an empty UTM value, at plan
# time.
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

locals {
  # Excel's "CSV UTF-8" starts the file with a byte order mark, which would
  # become part of the first column's name; column names are read in any
  # case. A row whose every cell is blank (a sheet exports formatted empty
  # rows as ",,,,,") is left out.
  rows = [
    for row in csvdecode(trimprefix(file("${path.module}/links.csv"), "\uFEFF")) :
    { for column, cell in row : lower(trimspace(column)) => trimspace(cell) }
    if trimspace(join("", values(row))) != ""
  ]
  # Keyed by slug, the link's name in the state: every row needs one, and
  # a slug on two rows fails the plan ("Duplicate object key"), naming it.
  links       = { for row in local.rows : row.slug => row }
  utm_columns = ["source", "medium", "campaign"]
}

resource "shortlink_link" "sheet" {
  for_each = local.links

  domain_id   = var.domain_id
  slug        = each.key
  destination = each.value.destination
  expires_at  = each.value.expires_at != "" ? each.value.expires_at : null

  # A row with no UTM cell filled has no utm at all (an empty one is an
  # error); otherwise each blank cell leaves its parameter out.
  utm = alltrue([for c in local.utm_columns : each.value[c] == ""]) ? null : {
    for c in local.utm_columns : c => each.value[c] != "" ? each.value[c] : null
  }
}

output "short_urls" {
  description = "Slug → short URL, for the sheet's next column."
  value       = { for slug, link in shortlink_link.sheet : slug => link.short_url }
}
