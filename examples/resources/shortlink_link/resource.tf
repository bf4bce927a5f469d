# A link with a chosen slug, an expiry and UTM parameters. Changing
# destination or utm re-targets it in place: the short URL, its QR code and
# its click history stay the same.
resource "shortlink_link" "spring" {
  domain_id   = "2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60" # dashboard → Domains
  destination = "https://example.com/sale"
  slug        = "spring"               # changing it replaces the link
  expires_at  = "2027-03-31T23:59:59Z" # compared by instant; changing it replaces the link

  utm = {
    source   = "newsletter"
    medium   = "email"
    campaign = "spring"
  }

  # Operation time limits, including waits for the rate limit and the
  # service's fraud filter. Defaults: 1h each, room for runs that share a
  # small allowance; a pipeline alone on its key can fail sooner.
  timeouts = {
    create = "15m"
  }
}

# A link whose slug the service generates.
resource "shortlink_link" "webinar" {
  domain_id   = "2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60"
  destination = "https://events.example.com/spring-webinar"
}

output "spring_short_url" {
  value = shortlink_link.spring.short_url
}
