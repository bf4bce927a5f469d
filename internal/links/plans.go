package links

import (
	"sync"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
)

// Plans is the ledger of the creates the plans of one Terraform walk
// declare, to find two resources that would create one slug: only one of
// the two creates could succeed, so the second plan is refused before
// anything is sent. It is safe for concurrent use.
//
// Terraform plans every resource once per walk, except a replacement: it
// is planned as a change of the old object, then again as a create with no
// prior state. The first plan announces the second (Replacing), which then
// neither counts twice nor reads its own old link as the slug's holder.
type Plans struct {
	mu       sync.Mutex
	declared map[string]client.CreateLinkInput
	// replacing counts, per identity, the creates of replacements that
	// keep their old link's slug, announced and not yet planned.
	replacing map[string]int
}

// NewPlans returns an empty ledger.
func NewPlans() *Plans {
	return &Plans{declared: map[string]client.CreateLinkInput{}, replacing: map[string]int{}}
}

// KeepsSlug reports whether in, the create of a replacement of the link
// old, asks for old's domain and slug, which old holds until it is
// deleted.
func KeepsSlug(old, in client.CreateLinkInput) bool {
	return in.Slug != "" && identity(old) == identity(in)
}

// Replacing announces that the create of in, about to be planned,
// replaces the link old. Only a replacement that keeps old's slug
// (KeepsSlug) matters.
func (p *Plans) Replacing(old, in client.CreateLinkInput) {
	if !KeepsSlug(old, in) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.replacing[identity(in)]++
}

// Declare records a planned create of in. It returns what another resource
// of the walk declared with the same domain and slug, if any (collides),
// and whether in's slug is held by the link it replaces (ownSlug), which
// is then no sign of a slug taken. A link without a slug collides with
// nothing.
func (p *Plans) Declare(in client.CreateLinkInput) (earlier client.CreateLinkInput, collides, ownSlug bool) {
	if in.Slug == "" {
		return client.CreateLinkInput{}, false, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	key := identity(in)
	if p.replacing[key] > 0 {
		p.replacing[key]--
		ownSlug = true
	}
	if earlier, collides = p.declared[key]; !collides {
		p.declared[key] = in
	}
	return earlier, collides, ownSlug
}
