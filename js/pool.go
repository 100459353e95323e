package js

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/tokenstorm/tokenstorm/js/executor"
	"github.com/tokenstorm/tokenstorm/js/vm"
)

// vuPool hands initialised VUs to the executors. The VUs the run plans for are created
// before setup() (as k6 does, so init cost never lands inside the measured run); further
// ones, up to max, are created the first time an executor asks and none is idle (the
// maxVUs of arrival-rate executors).
type vuPool struct {
	newVU func(ctx context.Context, id int64) (ProgramVU, error)
	// ctx is the VUs' lifetime: it outlives a cancelled run so teardown still works.
	ctx    context.Context
	max    int64
	logger *slog.Logger
	// minIter is k6's minIterationDuration: a shorter iteration waits out the rest.
	minIter time.Duration
	// onInitError is told about the first VU whose lazy init failed, so the run can
	// stop with exit code 107 (an executor only sees Acquire fail).
	onInitError func(error)
	// onAbort is told when an iteration called exec.test.abort().
	onAbort func(*vm.AbortError)

	mu      sync.Mutex
	all     []*poolVU
	idle    []*poolVU
	wake    chan struct{} // closed and replaced when a VU is released
	setup   json.RawMessage
	created int64 // VUs created or being created
}

// poolVU is a VU as the executors see it: errors of its iterations are logged here,
// where k6 logs them, and minIterationDuration is honoured.
type poolVU struct {
	vu   ProgramVU
	id   int64
	pool *vuPool
}

var _ executor.Pool = (*vuPool)(nil)
var _ executor.VU = (*poolVU)(nil)

func newVUPool(ctx context.Context, max int64, newVU func(context.Context, int64) (ProgramVU, error)) *vuPool {
	return &vuPool{ctx: ctx, max: max, newVU: newVU, wake: make(chan struct{})}
}

// initN creates n VUs in parallel (bounded by the CPUs: init is CPU-bound JS) and makes
// them idle. The first error wins; ctx cancellation stops it early.
func (p *vuPool) initN(ctx context.Context, n int64) error {
	if n > p.max {
		n = p.max
	}
	workers := int64(runtime.GOMAXPROCS(0))
	if workers > n {
		workers = n
	}
	ids := make(chan int64)
	errc := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range ids {
				v, err := p.create(ctx, id)
				if err != nil {
					errc <- err
					return
				}
				p.mu.Lock()
				p.idle = append(p.idle, v)
				p.mu.Unlock()
			}
		}()
	}
	var err error
feed:
	for i := int64(0); i < n; i++ {
		p.mu.Lock()
		p.created++
		id := p.created
		p.mu.Unlock()
		select {
		case ids <- id:
		case err = <-errc:
			break feed
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(ids)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errc:
		default:
		}
	}
	return err
}

func (p *vuPool) create(ctx context.Context, id int64) (*poolVU, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v, err := p.newVU(p.ctx, id)
	if err != nil {
		return nil, err
	}
	pv := &poolVU{vu: v, id: id, pool: p}
	p.mu.Lock()
	if p.setup != nil {
		v.SetSetupData(p.setup)
	}
	p.all = append(p.all, pv)
	p.mu.Unlock()
	return pv, nil
}

// setSetupData gives every VU, present and future, setup()'s result.
func (p *vuPool) setSetupData(data json.RawMessage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setup = data
	for _, v := range p.all {
		v.vu.SetSetupData(data)
	}
}

// initialised is the number of VUs initialised so far (the vus_max metric).
func (p *vuPool) initialised() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return int64(len(p.all))
}

// Acquire returns an idle VU, creating one when none is idle and fewer than max exist,
// else waits for a Release.
func (p *vuPool) Acquire(ctx context.Context) (executor.VU, error) {
	for {
		p.mu.Lock()
		if n := len(p.idle); n > 0 {
			v := p.idle[n-1]
			p.idle = p.idle[:n-1]
			p.mu.Unlock()
			return v, nil
		}
		if p.created < p.max {
			p.created++
			id := p.created
			p.mu.Unlock()
			v, err := p.create(ctx, id)
			if err != nil {
				p.mu.Lock()
				p.created--
				p.mu.Unlock()
				if ctx.Err() == nil && p.onInitError != nil {
					p.onInitError(err)
				}
				return nil, err
			}
			return v, nil
		}
		wake := p.wake
		p.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Release makes v idle again.
func (p *vuPool) Release(v executor.VU) {
	pv, ok := v.(*poolVU)
	if !ok || pv.pool != p {
		panic(fmt.Sprintf("js: Release of a VU this pool did not hand out (%T)", v))
	}
	p.mu.Lock()
	p.idle = append(p.idle, pv)
	close(p.wake)
	p.wake = make(chan struct{})
	p.mu.Unlock()
}

// RunIteration runs one iteration of the wrapped VU. An exception is logged with its
// stack, as k6 does, and returned so the executor counts the iteration as failed; the
// run goes on. Iterations cut short by the run stopping are not logged: they failed
// because of the stop, not because of the script.
func (v *poolVU) RunIteration(ctx context.Context, it executor.Iteration) error {
	start := time.Now()
	err := v.vu.RunIteration(ctx, it)
	if err != nil {
		var ab *vm.AbortError
		switch {
		case errors.As(err, &ab):
			if v.pool.onAbort != nil {
				v.pool.onAbort(ab)
			}
		case ctx.Err() != nil:
		case v.pool.logger != nil:
			v.pool.logIterationError(err, it)
		}
	}
	if min := v.pool.minIter; min > 0 {
		if rest := min - time.Since(start); rest > 0 {
			t := time.NewTimer(rest)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
		}
	}
	return err
}

func (p *vuPool) logIterationError(err error, it executor.Iteration) {
	msg := err.Error()
	var se *vm.ScriptError
	if errors.As(err, &se) {
		msg = se.Message
		if se.Stack != "" {
			msg += "\n" + strings.TrimRight(se.Stack, "\n")
		}
	}
	attrs := []any{slog.String("source", "stacktrace")}
	if it.Scenario != nil {
		attrs = append(attrs, slog.String("executor", it.Scenario.Executor), slog.String("scenario", it.Scenario.Name))
	}
	p.logger.Error(msg, attrs...)
}
