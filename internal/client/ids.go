package client

import "strings"

// Link and domain IDs are UUIDs, which RFC 4122 has written in lower case
// and read in any case: an ID a user wrote in capitals (copied from a tool
// that prints them so) names the same link as the service's spelling. So
// lookups compare such IDs in any case. Whether the service reads them in
// any case is not shown: requests carry its spelling where a listing shows
// it (links.ServiceLinkID). An ID that is not a UUID is the service's own
// and is compared exactly.

// ComparableID is id in the form IDs are compared in: a UUID in lower case,
// anything else as it is.
func ComparableID(id string) string {
	for i := range len(id) {
		if 'A' <= id[i] && id[i] <= 'Z' { // the rest only for capitals: every listed ID passes here
			if IsUUID(id) {
				return strings.ToLower(id)
			}
			return id
		}
	}
	return id
}

// SameID reports whether a and b name the same link.
func SameID(a, b string) bool { return ComparableID(a) == ComparableID(b) }

// IsUUID reports whether s is a UUID such as
// 2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60 (the form of link and domain IDs), in
// any case.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := range len(s) {
		switch c := s[i]; {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			return false
		}
	}
	return true
}
