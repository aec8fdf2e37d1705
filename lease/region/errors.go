package region

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrConflict is matched (errors.Is) by every *ConflictError.
	ErrConflict = errors.New("region: the region value is claimed by another region")
	// ErrRegistryUnreachable is returned by Claim and Verify, wrapped with the
	// store's error, when the registry did not answer. Start returns it only when
	// no cached claim lets the region start without the registry.
	ErrRegistryUnreachable = errors.New("region: the registry does not answer")
	// ErrBadOptions is returned for Options no call can succeed with.
	ErrBadOptions = errors.New("region: bad options")
	// ErrNotPinnable is returned when the registry cannot hold a claim without
	// renewals (it does not implement lease.Pinner).
	ErrNotPinnable = errors.New("region: the registry cannot pin a claim")
)

// Claimant is one region's claim on a region value.
type Claimant struct {
	// Name is the region's name, such as "eu-west".
	Name string
	// Store is the digest of the identity of the region's own lease store
	// (StoreDigest): the same for every server of one region.
	Store string
	// Claimed is when the claim was first pinned; zero for a claim being made.
	Claimed time.Time
	// Owner is the registry record's owner text as stored, for a record that was
	// not written by this package.
	Owner string
}

func (c Claimant) String() string {
	if c.Name == "" {
		return fmt.Sprintf("an unknown holder (owner %q)", c.Owner)
	}
	s := fmt.Sprintf("region %s (lease store %s", c.Name, c.Store)
	if !c.Claimed.IsZero() {
		s += ", claimed " + c.Claimed.UTC().Format(time.RFC3339)
	}
	return s + ")"
}

// ConflictError reports a region value that another region holds in the
// registry: two regions with one value can issue the same IDs.
type ConflictError struct {
	// Field and Value are the node field and its value, "datacenter" 1.
	Field string
	Value int64
	// Registry names the registry, its URL with the password redacted.
	Registry string
	// Scope is the registry scope the claims are kept in.
	Scope string
	// Ours is the claim refused; Theirs the claim the registry holds.
	Ours, Theirs Claimant
}

func (e *ConflictError) Error() string {
	if e.Theirs.Name != "" && e.Theirs.Name == e.Ours.Name {
		return fmt.Sprintf("region: %s=%d is claimed in %s by %s, and this server of a region of that name leases from another store (%s): two regions configured with one name, or the region's lease store was replaced. "+
			"Give a second region a name and value of its own; if the region's store was replaced, delete the old claim there first (docs/multi-region.md, \"Removing a region\"; flurry lease list %s --scope %s shows the claims)",
			e.Field, e.Value, e.Registry, e.Theirs, e.Ours.Store, e.Registry, e.Scope)
	}
	return fmt.Sprintf("region: %s=%d is claimed in %s by %s; %s cannot claim it: two regions with one value issue the same IDs. "+
		"Give this region a value no other region holds (flurry lease list %s --scope %s shows the claims), or, if %s is gone for good, delete its claim there first (docs/multi-region.md, \"Removing a region\")",
		e.Field, e.Value, e.Registry, e.Theirs, e.Ours, e.Registry, e.Scope, e.Theirs.Name)
}

// Is reports whether target is ErrConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }
