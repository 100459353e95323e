package executor

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMulDiv(t *testing.T) {
	tests := []struct{ a, b, c, floor, ceil int64 }{
		{0, 5, 3, 0, 0},
		{7, 3, 2, 10, 11},
		{1, int64(time.Second), 3, 333333333, 333333334},
		{math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64},
		{1 << 40, 1 << 40, 1 << 30, 1 << 50, 1 << 50},
		{math.MaxInt64, 4, 2, math.MaxInt64, math.MaxInt64}, // saturates
	}
	for _, tt := range tests {
		assert.Equal(t, tt.floor, mulDiv(tt.a, tt.b, tt.c), "mulDiv(%d,%d,%d)", tt.a, tt.b, tt.c)
		assert.Equal(t, tt.ceil, ceilMulDiv(tt.a, tt.b, tt.c), "ceilMulDiv(%d,%d,%d)", tt.a, tt.b, tt.c)
	}
}

func TestRampVUsAt(t *testing.T) {
	plan := rampVUs{start: 2, stages: []Stage{
		{10 * time.Second, 12}, // +1 VU every second
		{0, 5},                 // jump
		{3 * time.Second, 2},   // -1 VU every second
		{4 * time.Second, 2},   // hold
	}}
	tests := []struct {
		at   time.Duration
		vus  int64
		next time.Duration
		ok   bool
	}{
		{0, 2, time.Second, true},
		{999 * time.Millisecond, 2, time.Second, true},
		{time.Second, 3, 2 * time.Second, true},
		{9500 * time.Millisecond, 11, 10 * time.Second, true},
		{10 * time.Second, 5, 11 * time.Second, true},
		{12500 * time.Millisecond, 3, 13 * time.Second, true},
		{13 * time.Second, 2, 17 * time.Second, true},
		{17 * time.Second, 2, 17 * time.Second, false},
		{time.Hour, 2, 17 * time.Second, false},
	}
	for _, tt := range tests {
		vus, next, ok := plan.at(tt.at)
		assert.Equal(t, tt.vus, vus, "vus at %v", tt.at)
		assert.Equal(t, tt.next, next, "next at %v", tt.at)
		assert.Equal(t, tt.ok, ok, "ok at %v", tt.at)
	}
}

// TestRampVUsProperty checks rampVUs against the direct formula on random plans, and
// that the count does not change before the announced next time.
func TestRampVUsProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		plan := rampVUs{start: rng.Int64N(50)}
		for range 1 + rng.IntN(4) {
			plan.stages = append(plan.stages, Stage{time.Duration(rng.Int64N(int64(20 * time.Second))), rng.Int64N(200)})
		}
		var total time.Duration
		for _, st := range plan.stages {
			total += st.Duration
		}
		for range 50 {
			at := time.Duration(rng.Int64N(int64(total) + 1))
			vus, next, ok := plan.at(at)
			// direct: find the stage, interpolate with floats
			from, begin := plan.start, time.Duration(0)
			want := plan.stages[len(plan.stages)-1].Target
			for _, st := range plan.stages {
				if at < begin+st.Duration {
					frac := float64(at-begin) / float64(st.Duration)
					steps := math.Floor(math.Abs(float64(st.Target-from))*frac + 1e-9)
					if st.Target < from {
						want = from - int64(steps)
					} else {
						want = from + int64(steps)
					}
					break
				}
				from, begin = st.Target, begin+st.Duration
			}
			require.Equal(t, want, vus, "plan %+v at %v", plan, at)
			if ok {
				require.Greater(t, next, at)
				before, _, _ := plan.at(next - 1)
				require.Equal(t, vus, before, "count changed before next (%v) in %+v", next, plan)
			}
		}
	}
}

func countBefore(p arrivals, until time.Duration) int64 {
	var n int64
	for k := int64(0); ; k++ {
		at, ok := p.at(k)
		if !ok || at >= until {
			return n
		}
		n++
	}
}

func TestConstantArrivalsCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		rate := 1 + rng.Int64N(500)
		unit := time.Duration(1+rng.Int64N(3000)) * time.Millisecond
		dur := time.Duration(1+rng.Int64N(int64(5*time.Second/time.Millisecond))) * time.Millisecond
		p := constantArrivals{rate: rate, unit: unit, duration: dur}
		// ceil(dur·rate/unit), exactly
		want := ceilMulDiv(int64(dur), rate, int64(unit))
		require.Equal(t, want, countBefore(p, p.end()), "rate %d/%v over %v", rate, unit, dur)
		// and never an iteration at or after the end
		at, ok := p.at(want)
		assert.False(t, ok, "iteration %d at %v", want, at)
	}
}

func TestRampingArrivalsMatchIntegral(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 60 {
		unit := time.Duration(100+rng.Int64N(2000)) * time.Millisecond
		start := rng.Int64N(100)
		var stages []Stage
		for range 1 + rng.IntN(4) {
			stages = append(stages, Stage{time.Duration(rng.Int64N(int64(10 * time.Second))), rng.Int64N(100)})
		}
		p := newRampingArrivals(start, unit, stages)
		// Numerical integral of the rate curve at a few points.
		integral := func(until time.Duration) float64 {
			var n float64
			from, begin := float64(start), time.Duration(0)
			for _, st := range stages {
				end := begin + st.Duration
				if until <= begin {
					break
				}
				span := min(until, end) - begin
				to := float64(st.Target)
				if st.Duration > 0 {
					rateAtSpan := from + (to-from)*float64(span)/float64(st.Duration)
					n += (from + rateAtSpan) / 2 * float64(span) / float64(unit)
				}
				from, begin = to, end
			}
			return n
		}
		var prev time.Duration
		for k := int64(0); ; k++ {
			at, ok := p.at(k)
			if !ok {
				break
			}
			require.GreaterOrEqual(t, at, prev, "schedule goes back at k=%d", k)
			prev = at
		}
		for _, f := range []float64{0.1, 0.37, 0.5, 0.81, 1} {
			until := time.Duration(f * float64(p.end()))
			assert.InDelta(t, math.Ceil(integral(until)), float64(countBefore(p, until)), 1, "stages %v start %d unit %v at %v", stages, start, unit, until)
		}
		assert.Equal(t, int64(math.Ceil(integral(p.end())-1e-9)), countBefore(p, p.end()), "total for stages %v start %d unit %v", stages, start, unit)
	}
}

func TestPlansDoNotAllocate(t *testing.T) {
	c := constantArrivals{rate: 7, unit: time.Second, duration: time.Hour}
	r := newRampingArrivals(0, time.Second, []Stage{{time.Minute, 100}, {time.Minute, 10}})
	v := rampVUs{start: 1, stages: []Stage{{time.Minute, 100}}}
	var k int64
	allocs := testing.AllocsPerRun(1000, func() {
		k++
		c.at(k)
		r.at(k)
		v.at(time.Duration(k) * time.Millisecond)
	})
	assert.Zero(t, allocs)
}

// perIterationAllocs runs a scenario with n and 2n iterations and returns the
// difference per extra iteration, which is what the executor costs per iteration.
func perIterationAllocs(t *testing.T, build func(n int64) Scenario, fn func(context.Context, *fakeVU, Iteration) error) float64 {
	t.Helper()
	measure := func(n int64) float64 {
		return testing.AllocsPerRun(3, func() {
			synctest.Test(t, func(t *testing.T) {
				r, err := NewRun([]Scenario{build(n)}, &fakePool{fn: fn}, Hooks{Lag: func(*Scenario, time.Duration) {}})
				require.NoError(t, err)
				require.NoError(t, r.Start(context.Background()))
			})
		})
	}
	const n = 2000
	return (measure(2*n) - measure(n)) / n
}

func TestExecutorsDoNotAllocatePerIteration(t *testing.T) {
	tests := []struct {
		name  string
		build func(n int64) Scenario
		fn    func(context.Context, *fakeVU, Iteration) error
	}{
		{"shared-iterations", func(n int64) Scenario {
			sc := scenario("s", SharedIterations)
			sc.VUs, sc.Iterations = 2, n
			return sc
		}, nil},
		{"ramping-vus", func(n int64) Scenario {
			// 1 VU for n·10ms, with iterations of 10ms: n iterations.
			sc := scenario("s", RampingVUs)
			sc.StartVUs, sc.Stages = 1, []Stage{{time.Duration(n) * 10 * time.Millisecond, 1}}
			return sc
		}, func(context.Context, *fakeVU, Iteration) error { time.Sleep(10 * time.Millisecond); return nil }},
		{"constant-arrival-rate", func(n int64) Scenario {
			sc := scenario("s", ConstantArrivalRate)
			sc.Rate, sc.Duration, sc.PreAllocatedVUs, sc.MaxVUs = n, time.Second, 2, 2
			return sc
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			per := perIterationAllocs(t, tt.build, tt.fn)
			assert.Less(t, per, 0.05, "allocations per iteration")
		})
	}
}
