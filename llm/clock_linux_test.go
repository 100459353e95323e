package llm

import (
	"syscall"
	"unsafe"
)

// sharedClockNS reads CLOCK_MONOTONIC, the clock under Go's monotonic readings, which
// every process on the machine shares.
func sharedClockNS() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1 /* CLOCK_MONOTONIC */, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}
