// Package etcdstore keeps node-value leases and their high-water marks in etcd.
//
// A held value is a key attached to an etcd lease, so etcd itself deletes it when
// the lease expires; the marks are plain keys with no lease, so they survive
// expiry and release. Every change is a transaction that compares revisions, so
// two holders never both win one value, and a mark goes down only when its holder's
// Release says it issued less than it reserved. etcd commits through Raft: a write
// that returned is on a quorum and survives a leader change, so unlike Redis there
// is no failover window.
//
// # Keys
//
// With the default prefix "flurry/lease" and scope "orders/dc1":
//
//	flurry/lease/orders/dc1/held/42   {"owner":"...","token":"..."}, attached to the holder's etcd lease
//	flurry/lease/orders/dc1/mark/42   "1767225600000": the mark in Unix ms; no lease, never deleted
//
// A lease's Token is the etcd lease ID in hex, a dash and random text, so Renew can
// keep the right etcd lease alive. Do not delete the mark keys: they are what make
// reusing a value safe.
//
// # TTLs
//
// etcd leases have whole seconds, so a TTL is rounded up to whole seconds, and etcd
// raises TTLs below its minimum (1.5 × the election timeout, 2 s with the default
// 1 s election timeout) to that minimum. A lease thus lasts at least as long as
// asked, never less; Lease.Expires gives the TTL etcd granted. etcd renews a lease
// for the TTL it was granted with: Renew with a longer ttl than that moves the
// value to a new etcd lease and returns a new Token. etcd deletes an expired
// lease's keys within about half a second of its expiry, and after a leader change
// or a restart it extends every lease by its TTL, so a value can be held a little
// longer than its TTL, never shorter.
//
// # Cost
//
// Acquire reads every held and mark key of the scope (in pages of 1000 keys at one
// revision) to choose the value: fine for pools of thousands of values, slow for
// pools of millions that have all been used. Scopes are prefixes, so a scope's
// reads also walk the keys of scopes nested below it ("a" and "a/b"); give scopes
// that are not nested where pools are large.
package etcdstore
