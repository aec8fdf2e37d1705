//go:build !linux

package clock

import "time"

func preciseSleep(d time.Duration) { time.Sleep(d) }
