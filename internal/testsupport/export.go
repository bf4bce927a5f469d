package testsupport

import (
	"strings"
)

// ExportHeader is the header row of the emulator's analytics export.
const ExportHeader = "clicked_at,link_id,slug,short_url,destination,referrer,user_agent\r\n"

// ExportClick is one record of the emulator's export, quoted as CSV needs.
func ExportClick(at, linkID, referrer string) string {
	fields := []string{at, linkID, "s", "https://go.example.test/s", "https://example.com/", referrer, "curl/8"}
	for i, f := range fields {
		if strings.ContainsAny(f, ",\"\r\n") {
			fields[i] = `"` + strings.ReplaceAll(f, `"`, `""`) + `"`
		}
	}
	return strings.Join(fields, ",") + "\r\n"
}
