package llm

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loopbackPair returns a client connection with kernel stamps and the server's end.
func loopbackPair(t *testing.T) (*arrivalConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	srv, ok := <-accepted
	require.True(t, ok)
	ac, ok := wrapArrival(raw).(*arrivalConn)
	require.True(t, ok, "a TCP connection on Linux gets kernel stamps")
	t.Cleanup(func() { ac.Close(); srv.Close() })
	return ac, srv
}

// kernelStampsOn returns once the kernel stamps segments when they arrive, holding a
// stamped connection open for the rest of the test. Linux switches receive stamping on
// system-wide, asynchronously, when the first socket asks for it (and off some time
// after the last one closes); until then reads carry no stamp and are dated when they
// return, which is what a read-time stamp would say.
func kernelStampsOn(t *testing.T) {
	t.Helper()
	ac, srv := loopbackPair(t)
	buf := make([]byte, 1)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		_, err := srv.Write(buf)
		require.NoError(t, err)
		readStart := time.Now()
		_, err = ac.Read(buf)
		require.NoError(t, err)
		if ac.stamp(time.Now()).Before(readStart) {
			return
		}
	}
	t.Fatal("the kernel never stamped a segment on arrival")
}

// The stamp of a read is the kernel's receive time of its newest bytes: inside the
// window of the write that sent them, before the read was even started. A user-space
// stamp would be later than the read's start.
func TestArrivalStampIsKernelReceiveTime(t *testing.T) {
	kernelStampsOn(t)
	for _, tc := range []struct {
		name   string
		writes []int // bytes per write; all of them are read by one Read
	}{
		{"one small write", []int{40}},
		{"one chunk-sized write", []int{230}},
		{"three writes, one read", []int{100, 100, 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ac, srv := loopbackPair(t)
			var lastBefore, lastAfter time.Time
			total := 0
			for _, n := range tc.writes {
				lastBefore = time.Now()
				_, err := srv.Write(make([]byte, n))
				require.NoError(t, err)
				lastAfter = time.Now()
				total += n
			}
			readStart := time.Now()
			buf := make([]byte, 4096)
			got := 0
			for got < total {
				n, err := ac.Read(buf[got:])
				require.NoError(t, err)
				got += n
			}
			at := ac.stamp(time.Now())
			// Wall/monotonic conversion is exact to well under a microsecond; the
			// tolerance only absorbs rounding.
			const tol = 20 * time.Microsecond
			assert.False(t, at.Before(lastBefore.Add(-tol)), "stamp %v before the last write began", lastBefore.Sub(at))
			assert.False(t, at.After(lastAfter.Add(tol)), "stamp %v after the last write returned", at.Sub(lastAfter))
			assert.True(t, at.Before(readStart), "stamp not earlier than the read: not a kernel stamp")
		})
	}
}

func TestArrivalConnEOFAndNonTCP(t *testing.T) {
	ac, srv := loopbackPair(t)
	_, err := srv.Write([]byte("ab"))
	require.NoError(t, err)
	require.NoError(t, srv.Close())
	buf := make([]byte, 8)
	n, err := ac.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "ab", string(buf[:n]))
	_, err = ac.Read(buf)
	assert.ErrorIs(t, err, io.EOF)

	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	assert.Same(t, a, wrapArrival(a), "non-TCP connections are left alone")
	var nilConn *arrivalConn
	now := time.Now()
	assert.Equal(t, now, nilConn.stamp(now), "no connection: the read time")
}

func TestArrivalReadAllocatesNothing(t *testing.T) {
	ac, srv := loopbackPair(t)
	msg := make([]byte, 230)
	buf := make([]byte, 4096)
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := srv.Write(msg); err != nil {
			t.Fatal(err)
		}
		for got := 0; got < len(msg); {
			n, err := ac.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			got += n
		}
	})
	assert.Zero(t, allocs)
}

// End to end through Client.Do: a read stamps all the chunks it delivered with the
// arrival of its newest bytes, so chunk i's stamp lies between the server's record of
// having written chunk i-1 and its record of having written the chunk after the last
// one of the same read (chunks of one read share a stamp: a zero gap). A read-time stamp lands after
// that window whenever the reading goroutine runs after the writer's clock reading.
func TestClientStampsChunksWithKernelTime(t *testing.T) {
	kernelStampsOn(t)
	const chunks = 20
	var mu sync.Mutex
	var written []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for i := range chunks {
			w.Write([]byte(`data: {"choices":[{"delta":{"content":"t` + strconv.Itoa(i) + `"}}]}` + "\n\n"))
			f.Flush()
			mu.Lock()
			written = append(written, time.Now())
			mu.Unlock()
		}
		w.Write([]byte(`data: {"choices":[{"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name   string
		noKern bool
	}{{"kernel", false}, {"read time", true}} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			written = written[:0]
			mu.Unlock()
			c := newClient(t, Config{BaseURL: srv.URL + "/v1", NoKernelTimestamps: tc.noKern})
			res := c.Do(context.Background(), &Request{Prompt: "p", MaxTokens: chunks})
			require.NoError(t, res.Err)
			require.Equal(t, chunks, res.ContentChunks)
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, written, chunks)
			stamps := make([]time.Time, chunks)
			stamps[0] = res.Start.Add(res.TTFT)
			for i := 1; i < chunks; i++ {
				stamps[i] = stamps[i-1].Add(res.ITL[i-1])
			}
			const tol = 20 * time.Microsecond
			outside := 0
			for i := range chunks {
				j := i
				for j+1 < chunks && stamps[j+1].Equal(stamps[i]) {
					j++
				}
				// The kernel reports the stamp of the newest segment the read touched;
				// when segments were coalesced in the receive queue that can be the
				// next write's. The last read may also hold the finish and [DONE]
				// lines and the chunked-encoding terminator, written after the
				// handler returned: no upper bound for it.
				if j+1 < chunks-1 && stamps[i].After(written[j+1].Add(tol)) || (i > 0 && stamps[i].Before(written[i-1].Add(-tol))) {
					outside++
				}
			}
			if tc.noKern {
				t.Logf("read-time stamps outside the window: %d of %d", outside, chunks)
				return
			}
			assert.Zero(t, outside, "kernel stamps lie within the writes of their read")
		})
	}
}

// A read whose bytes carry no kernel stamp (stamping not yet on when they arrived, or
// switched off) must not inherit the previous read's stamp: that would date new bytes
// to an older read. Without a stamp the read's return time is used.
func TestArrivalReadWithoutStampForgetsOldStamp(t *testing.T) {
	kernelStampsOn(t)
	ac, srv := loopbackPair(t)
	buf := make([]byte, 64)
	_, err := srv.Write([]byte("first"))
	require.NoError(t, err)
	_, err = ac.Read(buf)
	require.NoError(t, err)
	require.NotZero(t, ac.last.Load(), "the first read carries a kernel stamp")

	var serr error
	require.NoError(t, ac.sys.rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 0)
	}))
	require.NoError(t, serr)
	_, err = srv.Write([]byte("second"))
	require.NoError(t, err)
	readStart := time.Now()
	n, err := ac.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "second", string(buf[:n]))
	at := ac.stamp(time.Now())
	assert.False(t, at.Before(readStart), "an unstamped read is dated %v before it started, by the previous read's stamp", readStart.Sub(at))
}

// recvmsg interrupted by a signal is retried, as the runtime does for net.Conn reads,
// rather than reported as a broken connection.
func TestArrivalReadRetriesEINTR(t *testing.T) {
	ac, srv := loopbackPair(t)
	calls := 0
	ac.sys.recvmsg = func(fd int, p, oob []byte, flags int) (int, int, int, syscall.Sockaddr, error) {
		calls++
		if calls == 1 {
			return 0, 0, 0, nil, syscall.EINTR
		}
		return syscall.Recvmsg(fd, p, oob, flags)
	}
	_, err := srv.Write([]byte("data"))
	require.NoError(t, err)
	buf := make([]byte, 16)
	n, err := ac.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "data", string(buf[:n]))
	assert.GreaterOrEqual(t, calls, 2)
}

// Reads through the netpoller keep net.Conn's behaviour: a deadline ends a blocked
// read with a timeout, Close from another goroutine ends it with net.ErrClosed, and a
// peer's reset surfaces as ECONNRESET (what the stale keep-alive retry looks for).
func TestArrivalReadDeadlineCloseReset(t *testing.T) {
	buf := make([]byte, 8)
	t.Run("deadline", func(t *testing.T) {
		ac, _ := loopbackPair(t)
		require.NoError(t, ac.SetReadDeadline(time.Now().Add(20*time.Millisecond)))
		_, err := ac.Read(buf)
		require.Error(t, err)
		assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
		var ne net.Error
		require.ErrorAs(t, err, &ne)
		assert.True(t, ne.Timeout())
		require.NoError(t, ac.SetReadDeadline(time.Time{}))
	})
	t.Run("close while blocked", func(t *testing.T) {
		ac, _ := loopbackPair(t)
		done := make(chan error, 1)
		go func() {
			_, err := ac.Read(buf)
			done <- err
		}()
		// Close races with the read's start; either way the read must end.
		require.NoError(t, ac.Close())
		assert.ErrorIs(t, <-done, net.ErrClosed)
	})
	t.Run("peer reset", func(t *testing.T) {
		ac, srv := loopbackPair(t)
		require.NoError(t, srv.(*net.TCPConn).SetLinger(0))
		require.NoError(t, srv.Close())
		_, err := ac.Read(buf)
		assert.ErrorIs(t, err, syscall.ECONNRESET)
		assert.True(t, isStaleConnError(err))
	})
}
