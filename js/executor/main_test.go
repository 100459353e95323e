package executor

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeVU runs fn; the pool gives each VU a distinct id.
type fakeVU struct {
	id   int64
	pool *fakePool
}

func (v *fakeVU) RunIteration(ctx context.Context, it Iteration) error {
	if v.pool.fn == nil {
		return nil
	}
	return v.pool.fn(ctx, v, it)
}

// fakePool hands out fakeVUs, checking the Acquire/Release discipline: no VU is given
// out twice at once and every one comes back.
type fakePool struct {
	fn         func(ctx context.Context, vu *fakeVU, it Iteration) error
	acquireErr error

	mu      sync.Mutex
	idle    []*fakeVU
	created int64
	out     map[*fakeVU]bool
	peak    int64
	misuse  []string
}

func (p *fakePool) Acquire(ctx context.Context) (VU, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.acquireErr != nil {
		return nil, p.acquireErr
	}
	if p.out == nil {
		p.out = map[*fakeVU]bool{}
	}
	var vu *fakeVU
	if n := len(p.idle); n > 0 {
		vu, p.idle = p.idle[n-1], p.idle[:n-1]
	} else {
		vu = &fakeVU{id: p.created, pool: p}
		p.created++
	}
	p.out[vu] = true
	p.peak = max(p.peak, int64(len(p.out)))
	return vu, nil
}

func (p *fakePool) Release(v VU) {
	p.mu.Lock()
	defer p.mu.Unlock()
	vu := v.(*fakeVU)
	if !p.out[vu] {
		p.misuse = append(p.misuse, "release of a VU not acquired")
		return
	}
	delete(p.out, vu)
	p.idle = append(p.idle, vu)
}

// check fails the test if VUs leaked or were misused.
func (p *fakePool) check(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.out) != 0 || len(p.misuse) != 0 {
		t.Errorf("pool: %d VUs not released, misuse: %v", len(p.out), p.misuse)
	}
}

// record is what a test VU saw of one iteration.
type record struct {
	vu    int64
	it    Iteration
	start time.Time
	end   time.Time
	err   error
}

// recorder collects iterations from concurrent VUs.
type recorder struct {
	mu   sync.Mutex
	recs []record
}

func (r *recorder) add(rec record) {
	r.mu.Lock()
	r.recs = append(r.recs, rec)
	r.mu.Unlock()
}

func (r *recorder) all() []record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]record(nil), r.recs...)
}

// sleepIter returns a VU body that takes d (on the clock of the current synctest
// bubble) unless its context is cancelled first, recording what happened.
func sleepIter(rec *recorder, d time.Duration) func(context.Context, *fakeVU, Iteration) error {
	return func(ctx context.Context, vu *fakeVU, it Iteration) error {
		start := time.Now()
		var err error
		if d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				err = ctx.Err()
			}
		}
		rec.add(record{vu: vu.id, it: it, start: start, end: time.Now(), err: err})
		return err
	}
}

var errBoom = errors.New("boom")
