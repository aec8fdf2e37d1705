// Package layout describes the bit fields of a 63-bit time-ordered ID and converts
// between IDs and their parts.
//
// A layout is an ordered list of fields, most significant first: one time field (a
// count of time units since an epoch), any number of named node fields (which machine,
// datacenter, shard, platform, ... issued the ID) and one sequence field (which ID
// inside one time unit). The Twitter layout draws as
//
//	 63        22      17    12           0
//	0|time (41)|dc (5)|wk (5)|seq (12)    |
//	 sign bit, always 0
//
// The time field must come first so that IDs sort by time; node and sequence fields
// may come in any order below it (sonyflake puts the sequence above the machine ID).
// Fields take at most 63 bits so an ID never sets the sign bit of an int64.
//
// # Text form
//
// A layout has a text form for command lines and configuration files:
//
//	layout   = field *( "," field )
//	field    = time / sequence / node
//	time     = "time:" bits ":" unit ":" epoch
//	sequence = ( "seq" / "sequence" ) ":" bits
//	node     = name ":" bits
//
// bits is a decimal number of bits (1..62). unit is a Go duration that is a whole
// number of milliseconds ("1ms", "10ms", "1s"). epoch is an RFC 3339 time with at
// most millisecond precision ("2010-11-04T01:42:54.657Z") or a count of Unix
// milliseconds ("1288834974657"). name is a lower-case letter followed by lower-case
// letters, digits or underscores, at most 32 characters, and not one of the reserved
// names time, seq, sequence, id and tick. Spaces around tokens are ignored. For
// example, the Twitter layout is
//
//	time:41:1ms:2010-11-04T01:42:54.657Z,datacenter:5,worker:5,seq:12
//
// [Parse] also accepts the name of a preset ("twitter", "sonyflake", ...), and
// [Layout.String] gives the canonical text form, so Parse(l.String()) equals l.
//
// # Planning
//
// [Plan] turns requirements (years of life, peak rate per node, number of nodes) into
// a layout, or explains which requirement does not fit in 63 bits.
package layout
