package region

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flurryid/flurry/lease"
)

// DefaultScope is the registry scope claims are kept in when Options.Scope is
// empty.
const DefaultScope = "flurry/regions"

// Options says which region claims which value where. Registry, Name and Store
// are required; the zero value of every other field is documented.
type Options struct {
	// Registry is the lease store every region can reach when it starts. It must
	// implement lease.Pinner (the file, SQL, Redis, etcd and memory stores do).
	Registry lease.Store
	// RegistryName names the registry in messages and in the cache: its URL with
	// the password redacted (lease.RedactURL). A cache made with another registry
	// is not trusted. Empty means "the registry".
	RegistryName string
	// Scope is the registry scope of the claims. Empty means DefaultScope. Every
	// region must use the same one.
	Scope string
	// Name is the region's name, such as "eu-west": 1 to 64 ASCII letters,
	// digits, '_', '-' or '.'.
	Name string
	// Value is the region value, the value of Field in every ID the region
	// issues; from 0 to 2^22-1.
	Value int64
	// Field is the layout's node field the value fills, for messages. Empty
	// means "region".
	Field string
	// Store is the identity of the region's own lease store (lease.Identifier's
	// StoreIdentity.ID): the same for every server of the region, different for
	// every other region, so that a second region with the same name is told
	// apart too, and a cache copied from another region's data directory is not
	// trusted.
	Store string
	// Cache is the file the claim is cached in, in the data directory. Empty
	// means no cache: Start then needs the registry every time.
	Cache string
	// Now reads the time claims are stamped with. Nil means time.Now.
	Now func() time.Time
}

func (o *Options) fill() error {
	if o.Registry == nil {
		return fmt.Errorf("%w: no registry", ErrBadOptions)
	}
	return o.fillClaim()
}

// fillClaim checks and fills what names the claim, all but the registry.
func (o *Options) fillClaim() error {
	if err := CheckName(o.Name); err != nil {
		return fmt.Errorf("%w: %w", ErrBadOptions, err)
	}
	if o.Value < 0 || o.Value >= 1<<22 {
		return fmt.Errorf("%w: region value %d must be from 0 to %d", ErrBadOptions, o.Value, 1<<22-1)
	}
	if o.Store == "" {
		return fmt.Errorf("%w: no identity of the region's lease store", ErrBadOptions)
	}
	if o.Scope == "" {
		o.Scope = DefaultScope
	}
	if o.Field == "" {
		o.Field = "region"
	}
	if o.RegistryName == "" {
		o.RegistryName = "the registry"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

// CheckName checks a region's name: 1 to 64 ASCII letters, digits, '_', '-' or
// '.', so that it reads in a registry record and a log line.
func CheckName(name string) error {
	if !validName(name) {
		return fmt.Errorf("region name %q: use 1 to 64 ASCII letters, digits, '_', '-' or '.'", name)
	}
	return nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// StoreDigest returns the short form of a lease store's identity that a claim
// records: 16 hex digits of its SHA-256. Identities can be long and name hosts
// and directories; the digest is enough to tell two stores apart.
func StoreDigest(identity string) string {
	h := sha256.Sum256([]byte(identity))
	return hex.EncodeToString(h[:8])
}

// Record is a region's claim on its value, as held in the registry or the cache.
type Record struct {
	// Claimant is the region: its name, its lease store's digest, when it
	// claimed the value.
	Claimant
	// Field and Value are the node field and the region value.
	Field string
	Value int64
	// Registry and Scope are where the claim is pinned.
	Registry string
	Scope    string
}

// Source says where Start found the claim.
type Source int

const (
	// FromRegistry: the registry answered (a new claim, or the region's own).
	FromRegistry Source = iota
	// FromCache: the cached claim matched and the registry was not asked.
	FromCache
)

func (s Source) String() string {
	if s == FromCache {
		return "cache"
	}
	return "registry"
}

// Start returns the region's claim: the cached one when it matches o (the same
// name, value, field, registry, scope and lease store), without asking the
// registry; else Claim's, which it then caches. A region that has cached its
// claim so starts while the registry is unreachable; call Verify in the
// background to learn when the registry disagrees.
func Start(ctx context.Context, o Options) (Record, Source, error) {
	if err := o.fill(); err != nil {
		return Record{}, 0, err
	}
	if c, ok, err := Cached(o); err != nil || ok {
		return c, FromCache, err
	}
	c, err := Claim(ctx, o)
	if err != nil {
		return c, FromRegistry, err
	}
	if o.Cache != "" {
		if err := saveCache(o.Cache, c, o.Store); err != nil {
			return c, FromRegistry, err
		}
	}
	return c, FromRegistry, nil
}

// Cached returns the cached claim when it matches o (as Start's), without the
// registry: o.Registry may be nil. It reports false when there is none, or one
// made for another claim (another name, value, field, registry, scope or lease
// store: a data directory copied from another region).
func Cached(o Options) (Record, bool, error) {
	if err := o.fillClaim(); err != nil {
		return Record{}, false, err
	}
	if o.Cache == "" {
		return Record{}, false, nil
	}
	c, err := loadCache(o.Cache)
	if errors.Is(err, errNoCache) {
		return Record{}, false, nil
	}
	if err != nil || !c.matches(o) {
		return Record{}, false, err
	}
	return c.claim(), true, nil
}

// Claim claims o.Value for region o.Name in the registry and pins the claim, or
// confirms the claim the region already holds there (a second server of the
// region, or a restart). It returns a *ConflictError when another region holds
// the value, or when the region holds another value there (a region's value is
// claimed once), and an error wrapping ErrRegistryUnreachable when the registry
// does not answer.
func Claim(ctx context.Context, o Options) (Record, error) {
	if err := o.fill(); err != nil {
		return Record{}, err
	}
	pinner, ok := o.Registry.(lease.Pinner)
	if !ok {
		return Record{}, fmt.Errorf("%w: %s does not implement lease.Pinner; use a file, SQL, Redis or etcd store", ErrNotPinnable, o.RegistryName)
	}
	ours := Claimant{Name: o.Name, Store: StoreDigest(o.Store)}
	if c, done, err := o.held(ctx, ours); done {
		return c, err
	}
	now := o.Now().UTC().Truncate(time.Second)
	ours.Claimed = now
	l, err := o.Registry.AcquireValue(ctx, o.Scope, o.Value, ours.owner(), time.Minute)
	if errors.Is(err, lease.ErrNoFreeValue) {
		// Another server of the region or another region took it since held
		// looked: look again.
		if c, done, err := o.held(ctx, Claimant{Name: o.Name, Store: ours.Store}); done {
			return c, err
		}
	}
	if err != nil {
		return Record{}, o.unreachable("claiming", err)
	}
	if _, err := pinner.Pin(ctx, l, lease.MaxPinTTL, 0); err != nil {
		o.Registry.Release(context.WithoutCancel(ctx), l, 0)
		return Record{}, o.unreachable("pinning", err)
	}
	return o.claim(ours), nil
}

// Verify checks the registry: nil when it holds o's claim, a *ConflictError when
// it holds another region's claim on the value (or none, a claim deleted by hand:
// then Verify claims it again), an error wrapping ErrRegistryUnreachable when it
// does not answer.
func Verify(ctx context.Context, o Options) error {
	_, err := Claim(ctx, o)
	return err
}

func (o *Options) claim(c Claimant) Record {
	return Record{Claimant: c, Field: o.Field, Value: o.Value, Registry: o.RegistryName, Scope: o.Scope}
}

func (o *Options) unreachable(what string, err error) error {
	return fmt.Errorf("%w: %s %s=%d for region %s in %s (scope %s): %w", ErrRegistryUnreachable, what, o.Field, o.Value, o.Name, o.RegistryName, o.Scope, err)
}

// held reads the registry's claims and decides when it can: done with the
// region's own claim on the value, or with a conflict; not done when the value
// is free and the region holds no other.
func (o *Options) held(ctx context.Context, ours Claimant) (Record, bool, error) {
	recs, err := o.Registry.List(ctx, o.Scope)
	if err != nil {
		return Record{}, true, o.unreachable("reading the claims on", err)
	}
	for _, r := range recs {
		if !r.Held {
			continue
		}
		them := parseOwner(r.Owner)
		same := them.Name == ours.Name && them.Store == ours.Store
		switch {
		case r.Value == o.Value && same:
			return o.claim(them), true, nil
		case r.Value == o.Value:
			return Record{}, true, &ConflictError{Field: o.Field, Value: o.Value, Registry: o.RegistryName, Scope: o.Scope, Ours: ours, Theirs: them}
		case same:
			return Record{}, true, fmt.Errorf("%w: region %s already holds %s=%d in %s (claimed %s), so it cannot claim %d too: a region's value is claimed once. "+
				"Configure value %d again, or delete the claim on %d there first if no server issues with it any more",
				ErrConflict, o.Name, o.Field, r.Value, o.RegistryName, them.Claimed.UTC().Format(time.RFC3339), o.Value, r.Value, r.Value)
		}
	}
	return Record{}, false, nil
}

// A claim's owner text in the registry: "region=eu-west store=<digest>
// claimed=<RFC 3339>", at most 120 bytes, under the 200 every store takes.
func (c Claimant) owner() string {
	return "region=" + c.Name + " store=" + c.Store + " claimed=" + c.Claimed.UTC().Format(time.RFC3339)
}

func parseOwner(s string) Claimant {
	var c Claimant
	for _, f := range strings.Fields(s) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "region":
			c.Name = v
		case "store":
			c.Store = v
		case "claimed":
			c.Claimed, _ = time.Parse(time.RFC3339, v)
		}
	}
	if c.Name == "" || c.Store == "" {
		return Claimant{Owner: s}
	}
	return c
}
