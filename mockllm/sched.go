package mockllm

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// errClosed is returned by blocking waits when the Server is closing.
var errClosed = errors.New("mockllm: server closed")

// scheduler is the capacity model: at most max sequences run; the rest wait in FIFO
// order. A slot is handed from a finishing sequence straight to the head of the queue,
// so the running count never dips while requests wait.
type scheduler struct {
	max int // 0: unlimited

	mu      sync.Mutex
	running int
	queue   []*ticket

	// Mirrors for lock-free reads on the per-chunk path and by /metrics.
	nRunning atomic.Int64
	nWaiting atomic.Int64
	kvTokens atomic.Int64
}

// ticket is a queued request; ch is closed when it is granted a slot.
type ticket struct {
	ch      chan struct{}
	granted bool // under scheduler.mu
}

// enter admits the caller at once (nil ticket) or queues it. It never blocks, so the
// caller can report its state (headers sent) knowing the counts already include it.
func (s *scheduler) enter() *ticket {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.max <= 0 || (s.running < s.max && len(s.queue) == 0) {
		s.running++
		s.nRunning.Store(int64(s.running))
		return nil
	}
	t := &ticket{ch: make(chan struct{})}
	s.queue = append(s.queue, t)
	s.nWaiting.Store(int64(len(s.queue)))
	return t
}

// wait blocks until t is granted a slot, ctx is done or closing is closed. On error
// the caller holds no slot.
func (s *scheduler) wait(ctx context.Context, closing <-chan struct{}, t *ticket) error {
	if t == nil {
		return nil
	}
	select {
	case <-t.ch:
		return nil
	case <-ctx.Done():
		s.abandon(t)
		return ctx.Err()
	case <-closing:
		s.abandon(t)
		return errClosed
	}
}

// abandon gives up what enter returned without running: the slot (nil ticket), the
// slot granted meanwhile, or the place in the queue.
func (s *scheduler) abandon(t *ticket) {
	if t == nil {
		s.release()
		return
	}
	s.mu.Lock()
	if t.granted {
		s.mu.Unlock()
		s.release()
		return
	}
	for i, q := range s.queue {
		if q == t {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			break
		}
	}
	s.nWaiting.Store(int64(len(s.queue)))
	s.mu.Unlock()
}

// release frees a slot held by the caller, handing it to the oldest waiter.
func (s *scheduler) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) > 0 {
		t := s.queue[0]
		s.queue[0] = nil
		s.queue = s.queue[1:]
		if len(s.queue) == 0 {
			s.queue = nil // let the backing array go once drained
		}
		t.granted = true
		close(t.ch)
		s.nWaiting.Store(int64(len(s.queue)))
		return
	}
	s.running--
	s.nRunning.Store(int64(s.running))
}
