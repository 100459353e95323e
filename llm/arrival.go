package llm

import (
	"net"
	"sync/atomic"
	"time"
)

// arrivalConn is a client connection that knows when its newest bytes arrived, by the
// kernel's receive timestamp (SO_TIMESTAMPNS on Linux) rather than by when the reading
// goroutine got to run. Under load a goroutine waits in the run queue between the
// network poller seeing data and Read returning; a user-space stamp adds that wait to
// every chunk, the kernel stamp does not.
//
// Linux turns receive stamping on system-wide, asynchronously, when the first socket
// asks for it; segments received before that carry no stamp, and a read of them is
// stamped when it returns, the read-time stamp this replaces, so nothing is lost.
//
// last is written by whichever goroutine reads the connection (the caller's for an
// HTTP/1.1 body, the transport's read loop for HTTP/2) and read by the Decoder.
type arrivalConn struct {
	net.Conn
	last atomic.Int64 // wall-clock ns of the newest bytes read; 0 when unknown
	sys  arrivalSys   // platform part (arrival_linux.go)
}

// maxArrivalLag bounds how far back a kernel stamp may move a chunk's time. A larger
// lag means the wall clock stepped between the two readings; the read time is used.
const maxArrivalLag = 10 * time.Second

// stamp returns the arrival time of the newest bytes read, as a time with a monotonic
// reading comparable to now (taken right after the read returned). The kernel stamp is
// wall-clock time, so it is placed on the monotonic axis by its distance from now's
// wall time; two clock readings microseconds apart make the slewing of the wall clock
// irrelevant.
func (c *arrivalConn) stamp(now time.Time) time.Time {
	if c == nil {
		return now
	}
	w := c.last.Load()
	if w == 0 {
		return now
	}
	lag := time.Duration(now.UnixNano() - w)
	if lag <= 0 || lag > maxArrivalLag {
		return now
	}
	return now.Add(-lag)
}

// since is the arrival of the newest bytes read, as time since start (the request's
// start), never negative: bytes the kernel received before the request started (a
// server writing to an idle keep-alive connection just as it is reused) or a forward
// step of the wall clock between receive and now would otherwise date a response
// before its own request.
func (c *arrivalConn) since(start, now time.Time) time.Duration {
	return max(c.stamp(now).Sub(start), 0)
}
