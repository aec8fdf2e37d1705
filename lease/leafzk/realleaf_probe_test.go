//go:build flurry_full

package leafzk

import "time"

// probeOn turns on the probe that openStore turns off (TestRealLeaf's Leaf
// servers serve HTTP at their registered addresses).
func probeOn(o *Options) {
	o.NoProbe = false
	o.ProbeTimeout = 500 * time.Millisecond
}

// probePort makes the probe ask port, where the Leaf server serves HTTP.
func probePort(o *Options, port int) { o.ProbePort = port }
