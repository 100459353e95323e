package executor

import (
	"context"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The timing tests run inside testing/synctest bubbles: time there is virtual and only
// moves when every goroutine of the bubble is blocked, so the executors run against an
// exact fake clock (through the default Clock) without a single real sleep.

func mustRun(t *testing.T, scs []Scenario, pool *fakePool, hooks Hooks) *Run {
	t.Helper()
	r, err := NewRun(scs, pool, hooks)
	require.NoError(t, err)
	return r
}

func scenario(name, executor string) Scenario {
	return Scenario{Name: name, Executor: executor, Exec: DefaultExec, GracefulStop: DefaultGracefulStop,
		MaxDuration: DefaultMaxDuration, TimeUnit: DefaultTimeUnit, GracefulRampDown: DefaultGracefulRampDown}
}

func TestIterationExecutorsExactCounts(t *testing.T) {
	tests := []struct {
		name       string
		executor   string
		vus, iters int64
		total      int64
	}{
		{"shared-iterations", SharedIterations, 4, 103, 103},
		{"shared-iterations one VU", SharedIterations, 1, 7, 7},
		{"per-vu-iterations", PerVUIterations, 3, 5, 15},
		{"per-vu-iterations many VUs", PerVUIterations, 16, 20, 320},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorder
			pool := &fakePool{fn: sleepIter(&rec, 0)}
			sc := scenario("s", tt.executor)
			sc.VUs, sc.Iterations = tt.vus, tt.iters
			r := mustRun(t, []Scenario{sc}, pool, Hooks{})
			require.NoError(t, r.Start(context.Background()))
			pool.check(t)

			recs := rec.all()
			require.Len(t, recs, int(tt.total))
			// InScenario: unique and complete, 0..total-1.
			var nums []int64
			perSlot := map[int64][]int64{}
			for _, rc := range recs {
				nums = append(nums, rc.it.InScenario)
				perSlot[rc.it.VUInScenario] = append(perSlot[rc.it.VUInScenario], rc.it.InVU)
				assert.Equal(t, "s", rc.it.Scenario.Name)
			}
			slices.Sort(nums)
			for i, n := range nums {
				require.Equal(t, int64(i), n, "InScenario numbering")
			}
			// VUInScenario within [0, vus); InVU per slot is 0..n-1.
			for slot, inVU := range perSlot {
				assert.GreaterOrEqual(t, slot, int64(0))
				assert.Less(t, slot, tt.vus)
				slices.Sort(inVU)
				for i, n := range inVU {
					assert.Equal(t, int64(i), n, "InVU of slot %d", slot)
				}
				if tt.executor == PerVUIterations {
					assert.Len(t, inVU, int(tt.iters), "slot %d", slot)
				}
			}
			if tt.executor == PerVUIterations {
				assert.Len(t, perSlot, int(tt.vus))
			}
			// As in k6, every slot holds its own VU for the whole scenario, even when
			// iterations are instant and a finished slot's VU could serve another.
			vuOf := map[int64]int64{}
			for _, rc := range recs {
				if v, ok := vuOf[rc.it.VUInScenario]; ok {
					assert.Equal(t, v, rc.vu, "slot %d changed VU", rc.it.VUInScenario)
				}
				vuOf[rc.it.VUInScenario] = rc.vu
			}
			distinct := map[int64]bool{}
			for _, v := range vuOf {
				distinct[v] = true
			}
			assert.Len(t, distinct, len(vuOf), "one VU per slot")
			assert.Equal(t, tt.vus, pool.peak, "all the scenario's VUs held at once")
			p := r.Progress().Scenarios[0]
			assert.Equal(t, tt.total, p.Started)
			assert.Equal(t, tt.total, p.Completed)
			assert.Equal(t, tt.total, p.Iterations)
			assert.Equal(t, Done, p.State)
			assert.Zero(t, p.Dropped)
			assert.Zero(t, r.ActiveVUs())
		})
	}
}

func TestMaxDurationStopsIterationExecutors(t *testing.T) {
	tests := []struct {
		name         string
		executor     string
		gracefulStop time.Duration
		// A VU iteration takes 3s; maxDuration is 10s with 2 VUs: iterations start at 0,
		// 3, 6 and 9s on each VU, so 8 start and the two started at 9s run past 10s.
		completed, interrupted, dropped int64
		end                             time.Duration
	}{
		{"shared, graceful stop long enough", SharedIterations, 30 * time.Second, 8, 0, 92, 12 * time.Second},
		{"shared, graceful stop too short", SharedIterations, time.Second, 6, 2, 92, 11 * time.Second},
		{"per-vu, graceful stop too short", PerVUIterations, 500 * time.Millisecond, 6, 2, 92, 10500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var rec recorder
				var dropped atomic.Int64
				pool := &fakePool{fn: sleepIter(&rec, 3*time.Second)}
				sc := scenario("s", tt.executor)
				sc.VUs, sc.Iterations, sc.MaxDuration, sc.GracefulStop = 2, 100, 10*time.Second, tt.gracefulStop
				if tt.executor == PerVUIterations {
					sc.Iterations = 50
				}
				r := mustRun(t, []Scenario{sc}, pool, Hooks{Dropped: func(*Scenario) { dropped.Add(1) }})
				start := time.Now()
				require.NoError(t, r.Start(t.Context()))
				assert.Equal(t, tt.end, time.Since(start), "run length")
				p := r.Progress().Scenarios[0]
				assert.Equal(t, tt.completed+tt.interrupted, p.Started)
				assert.Equal(t, tt.completed, p.Completed)
				assert.Equal(t, tt.interrupted, p.Interrupted)
				assert.Equal(t, tt.dropped, p.Dropped)
				assert.Equal(t, tt.dropped, dropped.Load(), "Dropped hook calls")
				pool.check(t)
			})
		})
	}
}

// activeAt steps virtual time to each offset from start and reads ActiveVUs there.
func activeAt(start time.Time, r *Run, offsets []time.Duration) []int64 {
	var got []int64
	for _, off := range offsets {
		time.Sleep(time.Until(start.Add(off)))
		synctest.Wait()
		got = append(got, r.ActiveVUs())
	}
	return got
}

func TestConstantVUs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		pool := &fakePool{fn: sleepIter(&rec, 1500*time.Millisecond)}
		sc := scenario("c", ConstantVUs)
		sc.VUs, sc.Duration = 3, 10*time.Second
		r := mustRun(t, []Scenario{sc}, pool, Hooks{})
		start := time.Now()
		var wg sync.WaitGroup
		var took time.Duration
		wg.Go(func() { assert.NoError(t, r.Start(context.Background())); took = time.Since(start) })
		got := activeAt(start, r, []time.Duration{50 * time.Millisecond, 5 * time.Second, 9900 * time.Millisecond, 10200 * time.Millisecond, 10600 * time.Millisecond})
		wg.Wait()
		// 3 VUs until the last iterations (started at 9s) end at 10.5s.
		assert.Equal(t, []int64{3, 3, 3, 3, 0}, got)
		// Each VU starts at 0, 1.5, ..., 9s: 7 iterations each.
		assert.Len(t, rec.all(), 21)
		assert.Equal(t, 10500*time.Millisecond, took)
		assert.Equal(t, int64(3), r.PlannedVUs())
		pool.check(t)
	})
}

func TestRampingVUsFollowsStages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		pool := &fakePool{fn: sleepIter(&rec, 100*time.Millisecond)}
		sc := scenario("r", RampingVUs)
		sc.StartVUs = 0
		sc.Stages = []Stage{{10 * time.Second, 10}, {5 * time.Second, 10}, {0, 4}, {10 * time.Second, 0}}
		r := mustRun(t, []Scenario{sc}, pool, Hooks{})
		assert.Equal(t, int64(10), r.PlannedVUs())
		start := time.Now()
		var wg sync.WaitGroup
		wg.Go(func() { assert.NoError(t, r.Start(context.Background())) })
		offsets := []time.Duration{}
		want := []int64{}
		for _, c := range []struct {
			at  float64 // seconds
			vus int64
		}{
			{0.05, 0}, {0.95, 0}, {1.05, 1}, {5.55, 5}, {9.95, 9}, {10.05, 10}, {14.95, 10},
			// The zero-length stage drops to 4 at 15s; then 4 → 0 over 10s: a step every
			// 2.5s. A removed VU is counted until its 100ms iteration ends.
			{15.15, 4}, {17.45, 4}, {17.65, 3}, {22.65, 1}, {24.95, 1}, {25.15, 0},
		} {
			offsets = append(offsets, time.Duration(c.at*float64(time.Second)))
			want = append(want, c.vus)
		}
		got := activeAt(start, r, offsets)
		wg.Wait()
		assert.Equal(t, want, got)
		assert.Equal(t, int64(10), r.TakePeakVUs(), "the peak outlives the ramp-down")
		assert.Zero(t, r.TakePeakVUs(), "a new window starts from the VUs held now")
		pool.check(t)
		// Ramp-downs waited for iterations (gracefulRampDown 30s > 100ms): none cut short.
		assert.Zero(t, r.Progress().Scenarios[0].Interrupted)
	})
}

func TestRampingVUsGracefulRampDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		// Iterations take 100s unless cancelled.
		pool := &fakePool{fn: sleepIter(&rec, 100*time.Second)}
		sc := scenario("r", RampingVUs)
		sc.StartVUs, sc.GracefulRampDown, sc.GracefulStop = 2, 2*time.Second, 30*time.Second
		// 2 → 0 over 10s after 5s: the second VU is removed at 10s, the first at 15s
		// (the end of the stages, where gracefulStop takes over).
		sc.Stages = []Stage{{5 * time.Second, 2}, {10 * time.Second, 0}}
		r := mustRun(t, []Scenario{sc}, pool, Hooks{})
		start := time.Now()
		var wg sync.WaitGroup
		wg.Go(func() { assert.NoError(t, r.Start(context.Background())) })
		got := activeAt(start, r, []time.Duration{11 * time.Second, 12500 * time.Millisecond})
		wg.Wait()
		assert.Equal(t, []int64{2, 1}, got)
		recs := rec.all()
		require.Len(t, recs, 2)
		ends := []time.Duration{recs[0].end.Sub(start), recs[1].end.Sub(start)}
		slices.Sort(ends)
		assert.Equal(t, []time.Duration{12 * time.Second, 45 * time.Second}, ends, "gracefulRampDown then gracefulStop")
		assert.Equal(t, int64(2), r.Progress().Scenarios[0].Interrupted)
		assert.Equal(t, TotalDuration([]Scenario{sc}), 45*time.Second)
		pool.check(t)
	})
}

func TestRampingVUsReactivatesDuringRampDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		pool := &fakePool{fn: sleepIter(&rec, 4*time.Second)}
		sc := scenario("r", RampingVUs)
		sc.StartVUs, sc.GracefulRampDown = 1, 10*time.Second
		// Down to 0 at 1s (the VU is mid-iteration), back to 1 at 2s: the same slot
		// carries on, and no iteration is cut short.
		sc.Stages = []Stage{{time.Second, 1}, {0, 0}, {time.Second, 0}, {0, 1}, {3 * time.Second, 1}}
		r := mustRun(t, []Scenario{sc}, pool, Hooks{})
		require.NoError(t, r.Start(context.Background()))
		p := r.Progress().Scenarios[0]
		assert.Zero(t, p.Interrupted)
		// Iterations at 0s and 4s on the one VU (it's active again by 4s; stages end at 5s).
		recs := rec.all()
		require.Len(t, recs, 2)
		assert.Equal(t, recs[0].vu, recs[1].vu)
		assert.Equal(t, int64(1), recs[1].it.InVU)
		pool.check(t)
	})
}

func TestConstantArrivalRateScheduleIsExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		var lags []time.Duration
		var mu sync.Mutex
		pool := &fakePool{fn: sleepIter(&rec, 0)}
		sc := scenario("car", ConstantArrivalRate)
		sc.Rate, sc.TimeUnit, sc.Duration, sc.PreAllocatedVUs, sc.MaxVUs = 3, time.Second, 10*time.Second, 1, 1
		r := mustRun(t, []Scenario{sc}, pool, Hooks{Lag: func(_ *Scenario, d time.Duration) {
			mu.Lock()
			lags = append(lags, d)
			mu.Unlock()
		}})
		start := time.Now()
		require.NoError(t, r.Start(context.Background()))
		recs := rec.all()
		require.Len(t, recs, 30)
		for k, rc := range recs {
			// floor(k·1s/3): 0, 333333333ns, 666666666ns, 1s, ...
			assert.Equal(t, time.Duration(int64(k)*int64(time.Second)/3), rc.start.Sub(start), "iteration %d", k)
			assert.Equal(t, int64(k), rc.it.InScenario)
		}
		assert.Len(t, lags, 30)
		for _, l := range lags {
			assert.Zero(t, l)
		}
		assert.Equal(t, 10*time.Second, time.Since(start), "ends with its duration")
		pool.check(t)
	})
}

func TestRampingArrivalRateMatchesIntegral(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		pool := &fakePool{fn: sleepIter(&rec, 0)}
		sc := scenario("rar", RampingArrivalRate)
		sc.StartRate, sc.PreAllocatedVUs, sc.MaxVUs = 0, 2, 2
		sc.Stages = []Stage{{10 * time.Second, 100}, {10 * time.Second, 100}, {0, 20}, {10 * time.Second, 0}}
		r := mustRun(t, []Scenario{sc}, pool, Hooks{})
		start := time.Now()
		require.NoError(t, r.Start(context.Background()))
		// N(t): 5t² for t ≤ 10s; 500 + 100(t-10) up to 20s; then 20 → 0 linearly.
		integral := func(t float64) float64 {
			switch {
			case t <= 10:
				return 5 * t * t
			case t <= 20:
				return 500 + 100*(t-10)
			default:
				u := t - 20
				return 1500 + 20*u - u*u
			}
		}
		var offs []float64
		for _, rc := range rec.all() {
			offs = append(offs, rc.start.Sub(start).Seconds())
		}
		sort.Float64s(offs)
		require.Len(t, offs, 1600, "total = integral over 30s")
		for _, at := range []float64{1, 2.5, 5, 9.99, 10, 15, 20, 25, 29.9} {
			started := sort.SearchFloat64s(offs, at) // starts strictly before at
			assert.InDelta(t, integral(at), float64(started), 1, "cumulative at %vs", at)
		}
	})
}

func TestArrivalRateDropsWhenMaxVUsBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		block := make(chan struct{})
		var ran atomic.Int64
		pool := &fakePool{fn: func(ctx context.Context, _ *fakeVU, _ Iteration) error {
			ran.Add(1)
			<-block // ignores ctx until the test lets go
			return nil
		}}
		var dropped atomic.Int64
		sc := scenario("car", ConstantArrivalRate)
		sc.Rate, sc.Duration, sc.PreAllocatedVUs, sc.MaxVUs = 10, time.Second, 2, 3
		r := mustRun(t, []Scenario{sc}, pool, Hooks{Dropped: func(s *Scenario) {
			assert.Equal(t, "car", s.Name)
			dropped.Add(1)
		}})
		assert.Equal(t, int64(2), r.PlannedVUs())
		assert.Equal(t, int64(3), r.MaxVUs())
		var wg sync.WaitGroup
		wg.Go(func() { assert.NoError(t, r.Start(context.Background())) })
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		// 10 scheduled: 2 on pre-allocated VUs, 1 on the lazily added third, 7 dropped.
		assert.Equal(t, int64(3), ran.Load())
		assert.Equal(t, int64(7), dropped.Load())
		assert.Equal(t, int64(3), r.ActiveVUs())
		p := r.Progress().Scenarios[0]
		assert.Equal(t, int64(7), p.Dropped)
		assert.Equal(t, Stopping, p.State)
		close(block)
		wg.Wait()
		pool.check(t)
	})
}

func TestGracefulStopCancelsIterationThatIgnoresTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ended time.Time
		pool := &fakePool{fn: func(ctx context.Context, _ *fakeVU, _ Iteration) error {
			<-ctx.Done() // an iteration that never ends by itself
			ended = time.Now()
			return ctx.Err()
		}}
		sc := scenario("c", ConstantVUs)
		sc.VUs, sc.Duration, sc.GracefulStop = 1, time.Second, 2*time.Second
		r := mustRun(t, []Scenario{sc}, pool, Hooks{})
		start := time.Now()
		require.NoError(t, r.Start(context.Background()))
		assert.Equal(t, 3*time.Second, ended.Sub(start), "cancelled after duration + gracefulStop")
		time.Sleep(time.Minute) // Progress after the end is frozen at the end
		assert.Equal(t, 3*time.Second, r.Progress().Elapsed)
		p := r.Progress().Scenarios[0]
		assert.Equal(t, 3*time.Second, p.Elapsed)
		assert.Equal(t, int64(1), p.Interrupted)
		assert.Zero(t, p.Completed)
		pool.check(t)
	})
}

func TestContextCancelIsGracefulAndAbortIsHard(t *testing.T) {
	t.Run("cancel lets running iterations finish", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var rec recorder
			pool := &fakePool{fn: sleepIter(&rec, time.Second)}
			sc := scenario("c", ConstantVUs)
			sc.VUs, sc.Duration = 2, time.Hour
			r := mustRun(t, []Scenario{sc}, pool, Hooks{})
			ctx, cancel := context.WithCancel(context.Background())
			start := time.Now()
			var wg sync.WaitGroup
			wg.Go(func() { assert.NoError(t, r.Start(ctx)) })
			time.Sleep(5500 * time.Millisecond)
			cancel()
			wg.Wait()
			assert.Equal(t, 6*time.Second, time.Since(start))
			p := r.Progress().Scenarios[0]
			assert.Equal(t, int64(12), p.Completed)
			assert.Zero(t, p.Interrupted)
			pool.check(t)
		})
	})
	t.Run("abort cancels running iterations at once", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var rec recorder
			pool := &fakePool{fn: sleepIter(&rec, 10*time.Second)}
			sc := scenario("c", ConstantVUs)
			sc.VUs, sc.Duration = 2, time.Hour
			r := mustRun(t, []Scenario{sc}, pool, Hooks{})
			start := time.Now()
			var wg sync.WaitGroup
			wg.Go(func() { assert.NoError(t, r.Start(context.Background())) })
			time.Sleep(5 * time.Second)
			r.Abort()
			wg.Wait()
			assert.Equal(t, 5*time.Second, time.Since(start))
			assert.Equal(t, int64(2), r.Progress().Scenarios[0].Interrupted)
			pool.check(t)
		})
	})
	t.Run("cancel before startTime: the scenario never starts", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			pool := &fakePool{}
			sc := scenario("late", PerVUIterations)
			sc.VUs, sc.Iterations, sc.StartTime = 1, 1, time.Minute
			r := mustRun(t, []Scenario{sc}, pool, Hooks{})
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			require.NoError(t, r.Start(ctx))
			assert.Zero(t, r.Progress().Scenarios[0].Started)
			assert.Equal(t, Done, r.Progress().Scenarios[0].State)
		})
	})
}

func TestStartTimeAndVUPlanning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		pool := &fakePool{fn: sleepIter(&rec, 300*time.Millisecond)}
		first := scenario("first", ConstantVUs)
		first.VUs, first.Duration, first.GracefulStop = 3, 2*time.Second, time.Second
		second := scenario("second", ConstantArrivalRate)
		second.StartTime, second.Rate, second.Duration, second.PreAllocatedVUs, second.MaxVUs = 3*time.Second, 4, time.Second, 2, 5
		r := mustRun(t, []Scenario{first, second}, pool, Hooks{})
		// The windows [0, 3s) and [3s, 5s) do not overlap: VUs are reused.
		assert.Equal(t, int64(3), r.PlannedVUs())
		assert.Equal(t, int64(5), r.MaxVUs())
		start := time.Now()
		require.NoError(t, r.Start(context.Background()))
		for _, rc := range rec.all() {
			if rc.it.Scenario.Name == "second" {
				assert.GreaterOrEqual(t, rc.start.Sub(start), 3*time.Second)
			} else {
				assert.Less(t, rc.start.Sub(start), 2*time.Second)
			}
		}
		assert.Equal(t, int64(4), r.Progress().Scenarios[1].Started)
		assert.LessOrEqual(t, pool.peak, int64(3))
		pool.check(t)

		// Overlapping windows add up.
		second.StartTime = 2 * time.Second
		r2 := mustRun(t, []Scenario{first, second}, pool, Hooks{})
		assert.Equal(t, int64(5), r2.PlannedVUs())
		assert.Equal(t, int64(8), r2.MaxVUs())
		assert.Equal(t, 33*time.Second, r2.Progress().Total, "second ends at 2s + 1s + 30s gracefulStop")
	})
}

func TestFailedIterationsAndAcquireErrors(t *testing.T) {
	t.Run("iteration errors are counted, the run goes on", func(t *testing.T) {
		pool := &fakePool{fn: func(_ context.Context, _ *fakeVU, it Iteration) error {
			if it.InScenario%2 == 0 {
				return errBoom
			}
			return nil
		}}
		sc := scenario("s", SharedIterations)
		sc.VUs, sc.Iterations = 2, 10
		r := mustRun(t, []Scenario{sc}, pool, Hooks{})
		require.NoError(t, r.Start(context.Background()))
		p := r.Progress().Scenarios[0]
		assert.Equal(t, int64(10), p.Completed)
		assert.Equal(t, int64(5), p.Failed)
	})
	t.Run("a VU that cannot be acquired aborts the run", func(t *testing.T) {
		pool := &fakePool{acquireErr: errBoom}
		sc := scenario("s", ConstantVUs)
		sc.VUs, sc.Duration = 2, time.Hour
		r := mustRun(t, []Scenario{sc}, pool, Hooks{})
		err := r.Start(context.Background())
		require.ErrorIs(t, err, errBoom)
		assert.Contains(t, err.Error(), `scenario "s"`)
		assert.ErrorIs(t, r.Start(context.Background()), ErrStarted)
	})
}

func TestNewRunValidates(t *testing.T) {
	bad := scenario("x", ConstantArrivalRate)
	bad.Duration, bad.PreAllocatedVUs, bad.MaxVUs = time.Second, 1, 1
	_, err := NewRun([]Scenario{bad}, &fakePool{}, Hooks{})
	assert.EqualError(t, err, "scenarios.x.rate: must be greater than 0")
	// Zero values that are invalid anyway take k6's defaults.
	r, err := NewRun([]Scenario{{Name: "z", Executor: ConstantArrivalRate, Rate: 5, Duration: time.Second, PreAllocatedVUs: 3}}, &fakePool{}, Hooks{})
	require.NoError(t, err)
	z := r.Scenarios()[0]
	assert.Equal(t, []any{"default", time.Second, int64(3), time.Duration(0)}, []any{z.Exec, z.TimeUnit, z.MaxVUs, z.GracefulStop})
	r, err = NewRun([]Scenario{{Name: "y", Executor: PerVUIterations}}, &fakePool{}, Hooks{})
	require.NoError(t, err)
	y := r.Scenarios()[0]
	assert.Equal(t, []any{int64(1), int64(1), 10 * time.Minute}, []any{y.VUs, y.Iterations, y.MaxDuration})
	ok := scenario("x", SharedIterations)
	ok.VUs, ok.Iterations = 1, 1
	_, err = NewRun([]Scenario{ok, ok}, &fakePool{}, Hooks{})
	assert.EqualError(t, err, "scenarios.x: defined twice")
	_, err = NewRun(nil, &fakePool{}, Hooks{})
	assert.EqualError(t, err, "scenarios: must define at least one scenario")
	_, err = NewRun([]Scenario{ok}, nil, Hooks{})
	assert.Error(t, err)
}

// TestConstantArrivalRateRealClock runs 2s at 200/s on the real clock. The 1% accuracy
// of the schedule is proven on virtual time (TestConstantArrivalRateScheduleIsExact,
// TestRampingArrivalRateMatchesIntegral) and measured on the real clock by
// BenchmarkConstantArrivalRate; a starved machine can legitimately start fewer (k6
// drops an iteration that finds no free VU), so this test asserts what holds under any
// load, and logs the accuracy it saw.
func TestConstantArrivalRateRealClock(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short: a 2s real-time run")
	}
	var started atomic.Int64
	var mu sync.Mutex
	var lags []time.Duration
	pool := &fakePool{fn: func(context.Context, *fakeVU, Iteration) error { started.Add(1); return nil }}
	sc := scenario("car", ConstantArrivalRate)
	sc.Rate, sc.Duration, sc.PreAllocatedVUs, sc.MaxVUs = 200, 2*time.Second, 4, 20
	r := mustRun(t, []Scenario{sc}, pool, Hooks{Lag: func(_ *Scenario, d time.Duration) {
		mu.Lock()
		lags = append(lags, d)
		mu.Unlock()
	}})
	begin := time.Now()
	require.NoError(t, r.Start(context.Background()))
	took := time.Since(begin)
	p := r.Progress().Scenarios[0]
	assert.LessOrEqual(t, started.Load()+p.Dropped, int64(400), "never more than the schedule")
	assert.Positive(t, started.Load())
	assert.Equal(t, started.Load(), p.Started)
	assert.GreaterOrEqual(t, took, 2*time.Second)
	mu.Lock()
	defer mu.Unlock()
	assert.Len(t, lags, int(started.Load()), "one lag per started iteration")
	slices.Sort(lags)
	assert.GreaterOrEqual(t, lags[0], time.Duration(0), "no iteration starts before its time")
	t.Logf("started %d (%.1f%% of 400), dropped %d in %v; lag p50 %v p99 %v max %v", started.Load(),
		float64(started.Load())/4, p.Dropped, took, lags[len(lags)/2], lags[len(lags)*99/100], lags[len(lags)-1])
	pool.check(t)
}

// offsetClock reads a different wall time than the time package: if any executor code
// mixed time.Now with Clock.Now, its arithmetic would be off by years.
type offsetClock struct {
	realClock
	off time.Duration
}

func (c offsetClock) Now() time.Time { return time.Now().Add(c.off) }

func TestWithClockIsTheOnlyTimeSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		pool := &fakePool{fn: sleepIter(&rec, 0)}
		car := scenario("car", ConstantArrivalRate)
		car.Rate, car.Duration, car.PreAllocatedVUs, car.StartTime = 10, time.Second, 1, 2*time.Second
		rv := scenario("rv", RampingVUs)
		rv.StartVUs, rv.Stages = 1, []Stage{{time.Second, 1}}
		quick, slow := sleepIter(&rec, 0), sleepIter(&rec, 150*time.Millisecond)
		pool.fn = func(ctx context.Context, vu *fakeVU, it Iteration) error {
			if it.Scenario.Name == "rv" {
				return slow(ctx, vu, it)
			}
			return quick(ctx, vu, it)
		}
		r, err := NewRun([]Scenario{car, rv}, pool, Hooks{}, WithClock(offsetClock{off: -100000 * time.Hour}))
		require.NoError(t, err)
		start := time.Now()
		require.NoError(t, r.Start(context.Background()))
		assert.Equal(t, 3*time.Second, time.Since(start))
		p := r.Progress()
		assert.Equal(t, 3*time.Second, p.Elapsed)
		assert.Equal(t, int64(10), p.Scenarios[0].Started)
		assert.Equal(t, time.Second, p.Scenarios[0].Elapsed)
		assert.Equal(t, int64(7), p.Scenarios[1].Started, "0, 0.15, ..., 0.9s")
		assert.Equal(t, 1050*time.Millisecond, p.Scenarios[1].Elapsed)
		pool.check(t)
	})
}
