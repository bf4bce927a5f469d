# A link managed elsewhere (the dashboard, another configuration), by its
# domain and slug...
data "shortlink_link" "homepage" {
  domain_id = "2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60"
  slug      = "home"
}

# ...or by its ID.
data "shortlink_link" "by_id" {
  id = "7d0c5a52-3c1e-4f7b-a1d2-5e6f7a8b9c0d"
}

output "homepage" {
  value = {
    short_url   = data.shortlink_link.homepage.short_url
    destination = data.shortlink_link.homepage.destination
    qr_code_url = data.shortlink_link.homepage.qr_code_url
  }
}
