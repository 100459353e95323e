package vm

import (
	"context"
	"sync"
	"sync/atomic"
)

// eventLoop is a VU's callback queue (k6's event loop). Module code reserves a slot with
// register on the VU goroutine and later, from any goroutine, enqueues exactly one
// callback into it; run executes the callbacks on the VU goroutine until no slot is
// reserved and the queue is empty.
//
// Slots belong to a generation. reset starts a new one, so an enqueue arriving after its
// iteration ended (say a request goroutine that noticed the cancelled context late) is
// dropped instead of running in the wrong iteration.
type eventLoop struct {
	mu      sync.Mutex
	queue   []func() error
	spare   []func() error
	pending int
	gen     uint64
	wake    chan struct{} // capacity 1: "something changed"
}

func newEventLoop() *eventLoop { return &eventLoop{wake: make(chan struct{}, 1)} }

// register reserves a slot and returns its goroutine-safe enqueue function.
func (l *eventLoop) register() func(func() error) {
	l.mu.Lock()
	l.pending++
	gen := l.gen
	l.mu.Unlock()
	var called atomic.Bool
	return func(cb func() error) {
		if !called.CompareAndSwap(false, true) {
			return // the contract says exactly once; a second call is ignored, not a panic
		}
		l.mu.Lock()
		if l.gen != gen {
			l.mu.Unlock()
			return
		}
		l.pending--
		l.queue = append(l.queue, cb)
		l.mu.Unlock()
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// run executes queued callbacks until nothing is pending, a callback fails, or ctx is
// done (then ctx.Err() is returned and the remaining work is left for reset to drop).
func (l *eventLoop) run(ctx context.Context) error {
	for {
		l.mu.Lock()
		batch := l.queue
		l.queue, l.spare = l.spare[:0], nil // the spare is handed over, never aliased
		pending := l.pending
		l.mu.Unlock()
		if len(batch) == 0 {
			if pending == 0 {
				return nil
			}
			select {
			case <-l.wake:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		for i, cb := range batch {
			batch[i] = nil
			if err := protectErr(cb); err != nil {
				l.keep(batch)
				return err
			}
			if ctx.Err() != nil {
				l.keep(batch)
				return ctx.Err()
			}
		}
		l.keep(batch)
	}
}

// keep recycles a drained batch slice as the next queue's backing array.
func (l *eventLoop) keep(batch []func() error) {
	clear(batch)
	l.mu.Lock()
	l.spare = batch[:0]
	l.mu.Unlock()
}

// reset drops everything pending and starts a new generation; late enqueues of the old
// generation become no-ops.
func (l *eventLoop) reset() {
	l.mu.Lock()
	l.gen++
	l.pending = 0
	clear(l.queue)
	l.queue = l.queue[:0]
	l.mu.Unlock()
	select {
	case <-l.wake:
	default:
	}
}

// idle reports whether no slot is reserved and nothing is queued.
func (l *eventLoop) idle() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pending == 0 && len(l.queue) == 0
}
