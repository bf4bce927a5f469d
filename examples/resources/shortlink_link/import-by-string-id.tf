# The ID is the link's ID or <domain_id>/<slug>.
import {
  to = shortlink_link.spring
  id = "2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60/spring"
}
