// Package region guards the one setting that makes every ID of two datacenters
// collide: two regions configured with the same region value (the value of a
// layout's datacenter or region field).
//
// A region is a set of servers with a lease store of its own. Nothing is
// coordinated between regions on the hot path or in leases, so two regions are
// kept apart only by their region values. Each region claims its value once in a
// registry, a lease store every region can reach when it starts (a global etcd,
// SQL database or Redis), where the claim is pinned (lease.Pinner) for a
// century, and keeps the claim in a cache file in its data directory:
//
//   - Start with a cached claim that matches the configuration returns at once,
//     without the registry, so that a region cut off from the others, or from the
//     registry, starts and runs for as long as its own store lives; Verify then
//     checks the registry in the background.
//   - Start without a cached claim claims the value in the registry (Claim) and
//     refuses to start when the registry does not answer (ErrRegistryUnreachable).
//   - A value already pinned to another region (another name, or the same name
//     with another region lease store) is refused with a *ConflictError that names
//     both claimants.
//
// What the guard cannot see: two regions whose configurations name different
// registries; a claim removed from the registry by hand; a region value changed
// in the layout or node field without the region block; two regions sharing one
// lease store under two names are told apart by name only.
package region
