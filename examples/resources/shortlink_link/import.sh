# By the link's ID:
terraform import shortlink_link.spring 7d0c5a52-3c1e-4f7b-a1d2-5e6f7a8b9c0d

# Or by <domain_id>/<slug>:
terraform import shortlink_link.spring 2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60/spring

# Or by its short URL:
terraform import shortlink_link.spring https://go.example.com/spring
