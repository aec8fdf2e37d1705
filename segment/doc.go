// Package segment hands out plain positive int64 IDs per tag from ranges ("segments")
// a database grants in blocks, as Meituan Leaf-segment, Didi tinyid and Flickr's ticket
// servers do.
//
// A [Store] keeps per tag the highest counter value handed out and hands out blocks of
// counter values atomically; stores live in sub-packages, one per engine (SQL, Redis,
// etcd), and are held to one conformance suite, package segmenttest. An [Allocator]
// serves IDs of one tag from memory out of two buffers: while it issues from the
// current range it fetches the next one in the background, so Next never waits on the
// database while a range is ready.
package segment
