package llm

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// arrivalSys reads with recvmsg to get SCM_TIMESTAMPNS with every read. Its fields are
// the one reader's scratch (a net.Conn has one reader at a time): the read callback is
// a method value made once per connection, so a read allocates nothing.
type arrivalSys struct {
	rc     syscall.RawConn
	readFn func(fd uintptr) bool
	p      []byte
	n      int
	oobn   int
	err    error
	oob    [64]byte
	// recvmsg is syscall.Recvmsg; tests replace it to inject errors.
	recvmsg func(fd int, p, oob []byte, flags int) (n, oobn, recvflags int, from syscall.Sockaddr, err error)
}

// wrapArrival enables kernel receive timestamps on a TCP connection. Any failure
// leaves the connection as it was: timing then falls back to the read's return time.
func wrapArrival(conn net.Conn) net.Conn {
	tc, ok := conn.(*net.TCPConn)
	if !ok {
		return conn
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return conn
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return conn
	}
	c := &arrivalConn{Conn: conn}
	c.sys.rc = rc
	c.sys.readFn = c.recv
	c.sys.recvmsg = syscall.Recvmsg
	return c
}

func (c *arrivalConn) recv(fd uintptr) bool {
	s := &c.sys
	for {
		s.n, s.oobn, _, _, s.err = s.recvmsg(int(fd), s.p, s.oob[:], 0)
		// A signal can interrupt the call; net.Conn reads retry it, so do we.
		if s.err != syscall.EINTR {
			break
		}
	}
	if raceEnabled && s.err == nil {
		// syscall.Read tells the race detector that a read follows the peer's write
		// (the kernel orders them); Recvmsg does not. A zero-byte read restores that
		// edge in race builds only, so tests see what a real program guarantees.
		syscall.Read(int(fd), nil)
	}
	return s.err != syscall.EAGAIN
}

// cmsgTimestampOff is where the timespec of a single SCM_TIMESTAMPNS control message
// starts: after a cmsghdr, aligned.
const cmsgTimestampOff = syscall.SizeofCmsghdr

func (c *arrivalConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s := &c.sys
	s.p = p
	if err := s.rc.Read(s.readFn); err != nil {
		s.p = nil
		return 0, err // deadline or closed connection, as net.Conn reports them
	}
	s.p = nil
	if s.err != nil {
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("recvmsg", s.err)}
	}
	if s.n == 0 {
		return 0, io.EOF
	}
	// A read without a stamp (the kernel omits it for segments that arrived before
	// stamping was on) stores 0, the read's return time, rather than keep the previous
	// read's older stamp for these newer bytes.
	var at int64
	const tsLen = int(unsafe.Sizeof(syscall.Timespec{}))
	if s.oobn >= cmsgTimestampOff+tsLen {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&s.oob[0]))
		if h.Level == syscall.SOL_SOCKET && h.Type == syscall.SCM_TIMESTAMPNS && int(h.Len) >= cmsgTimestampOff+tsLen {
			ts := (*syscall.Timespec)(unsafe.Pointer(&s.oob[cmsgTimestampOff]))
			at = ts.Nano()
		}
	}
	c.last.Store(at)
	return s.n, nil
}
