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
	// objects are the links the plans of existing objects name.
	objects namers
}

// NewPlans returns an empty ledger.
func NewPlans() *Plans {
	return &Plans{declared: map[string]client.CreateLinkInput{}, replacing: map[string]int{}, objects: namers{}}
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

// Planned records the plan of an existing object, marked object, that
// names link id. twice: the walk planned another object naming it, so two
// objects of the state name one link and destroying either deletes it.
// Unlike a refresh (Creator.Hold), a plan tells an import into a second
// resource in its own run: a CLI that imports a link twice in a run, or
// reads the object a removed block drops, plans one object, the last one
// read, whose mark the refresh gave it. An object without a mark (not
// refreshed: -refresh=false) is not known.
func (p *Plans) Planned(id, object string) (twice bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.objects.add(id, object)
}

// namers are the links objects of the state name, each with the first
// marked object (its objectKey in the provider's private state) found
// naming it.
type namers map[string]string

// add records that object names link id. twice: another object named it
// first. An object without a mark ("") is not known, and not recorded.
func (n namers) add(id, object string) (twice bool) {
	if object == "" {
		return false
	}
	earlier, ok := n[id]
	if !ok {
		n[id] = object
	}
	return ok && earlier != object
}
