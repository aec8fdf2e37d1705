package snowflake

import _ "unsafe" // for go:linkname

// procPin and procUnpin give the lanes-merge variant the index of the processor
// (the runtime's P) the caller runs on, as sync.Pool uses it. The runtime keeps
// them linkable for outside packages (go.dev/issue/67401).
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()
