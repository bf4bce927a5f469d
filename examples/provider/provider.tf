terraform {
  required_providers {
    shortlink = {
      source  = "shortlink/shortlink"
      version = "~> 0.1" # any 0.x from 0.1; .terraform.lock.hcl (commit it) pins the exact build
    }
  }
}

# The API key is best left out of the configuration: export
# SHORTLINK_API_KEY and SHORTLINK_BASE_URL in the environment instead. A
# setting written here wins over its environment variable.
provider "shortlink" {
  # base_url = "https://api.shortlink.example" # or SHORTLINK_BASE_URL
  max_retries = 8 # retries after a 5xx or a network error (a 429 is waited out)
}
