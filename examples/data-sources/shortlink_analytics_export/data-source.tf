# Every click of the account, as CSV and as rows.
data "shortlink_analytics_export" "all" {}

# The clicks of one link in March 2027 (since inclusive, until exclusive),
# as rows only: the state does not hold them twice.
data "shortlink_analytics_export" "spring_march" {
  link_id     = "7d0c5a52-3c1e-4f7b-a1d2-5e6f7a8b9c0d" # e.g. shortlink_link.spring.id
  since       = "2027-03-01T00:00:00Z"
  until       = "2027-04-01T00:00:00Z"
  include_csv = false
}

output "spring_march_clicks" {
  value = data.shortlink_analytics_export.spring_march.row_count
}

# The destinations the clicks were sent to, from the parsed rows (for counts
# per link, day or referrer, data.shortlink_clicks keeps a smaller state).
output "spring_march_destinations" {
  value = distinct([for row in data.shortlink_analytics_export.spring_march.rows : row["destination"]])
}

# The raw CSV of the whole account, for a spreadsheet, without the rows.
data "shortlink_analytics_export" "all_csv" {
  include_rows = false
}

output "all_clicks_csv" {
  value = data.shortlink_analytics_export.all_csv.csv
}
