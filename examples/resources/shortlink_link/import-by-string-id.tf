# The ID is the link's ID, <domain_id>/<slug> or its short URL.
import {
  to = shortlink_link.spring
  id = "2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60/spring"
}
