//go:build !linux

package llm

import "time"

// sharedClockNS falls back to the wall clock, which processes share too but which may
// be slewed between the two processes' readings (microseconds over a benchmark).
func sharedClockNS() int64 { return time.Now().UnixNano() }
