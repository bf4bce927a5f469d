# Every click of the account.
data "shortlink_analytics_export" "all" {}

# The clicks of one link only.
data "shortlink_analytics_export" "spring" {
  link_id = "7d0c5a52-3c1e-4f7b-a1d2-5e6f7a8b9c0d" # e.g. shortlink_link.spring.id
}

output "spring_clicks" {
  value = data.shortlink_analytics_export.spring.row_count
}

# Clicks per referrer, from the parsed rows.
output "spring_clicks_by_referrer" {
  value = {
    for referrer, rows in {
      for row in data.shortlink_analytics_export.spring.rows : row["referrer"] => row...
    } : referrer => length(rows)
  }
}

# The raw CSV, for a spreadsheet.
output "all_clicks_csv" {
  value = data.shortlink_analytics_export.all.csv
}
