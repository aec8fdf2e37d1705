// Package layout describes the bit fields of a 63-bit time-ordered ID and converts
// between IDs and their parts.
//
// A layout is an ordered list of fields, most significant first: one time field (a
// count of time units since an epoch), any number of named node fields (machine,
// datacenter, shard, ...) and one sequence field (which ID inside one time unit). The
// time field comes first so that IDs sort by time; the others may come in any order
// (sonyflake puts the sequence above the machine ID). At most 63 bits, so an ID never
// sets the sign bit of an int64. The Twitter layout:
//
//	 63        22      17    12           0
//	0|time (41)|dc (5)|wk (5)|seq (12)    |
//
// Its text form, for command lines and configuration files, is
//
//	time:41:1ms:2010-11-04T01:42:54.657Z,datacenter:5,worker:5,seq:12
//
// ([Parse] has the grammar; it also takes a preset's name, such as "twitter").
//
// [Plan] turns requirements (years of life, peak rate per node, number of nodes) into
// a layout, or explains which requirement does not fit in 63 bits.
package layout
