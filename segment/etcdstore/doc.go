// Package etcdstore keeps segment counters (segment.Store) in etcd.
//
// Every change is a transaction that compares revisions, so two callers never get
// one value; etcd commits through Raft, so a Take that returned is on a quorum and
// survives a leader change or a restart: unlike Redis there is no failover window
// and no persistence setting to get right.
//
// # Keys
//
// With the default prefix "flurry" and the tag "orders":
//
//	flurry/segment/tags/orders                          {"max":1000,"step":100,"description":"...","updated":1767225600000}
//	flurry/segment/returned/orders/0000000000000000951  "1000": a returned block 951..1000
//
// A returned key ends in the block's first value in 19 zero-padded digits, so keys
// sort as the numbers; its value is the block's last value. Do not delete a tag
// record: its max is what keeps fresh blocks above every value handed out.
//
// # Transactions
//
// Take reads the tag record and the lowest returned keys above the floor in one
// read-only transaction. It claims a returned block with a transaction that
// compares the block key's ModRevision (it exists, unchanged) and the tag record's
// ModRevision, and deletes the key; it takes fresh values with one that compares
// the tag record's ModRevision and writes the raised max. Return compares the tag
// record's ModRevision and that the block's key does not exist, writes the key and
// rewrites the record, so a Take that read no returned block conflicts with a
// Return that came between. A transaction that loses to another caller returns
// the current record in its Else branch and the call tries again at once, then
// after a short random pause, up to 200 times; many allocators taking from one
// tag at once thus cost retries, which larger steps avoid.
//
// # Clock
//
// Tag.Updated is the writing client's clock, in Unix milliseconds: etcd responses
// carry no server time a client could use. It is for people reading listings;
// nothing in the store depends on it.
//
// # Tag names
//
// Tag names may contain "/", so the returned keys of a tag "a/0000000000000000001"
// lie among those of tag "a". Keys whose rest after "returned/a/" is not exactly 19
// digits are not tag a's, and Take reads past them.
package etcdstore
