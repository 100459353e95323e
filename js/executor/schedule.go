package executor

import (
	"math"
	"math/big"
	"math/bits"
	"time"
)

// The executors' plans are pure functions of time (or of the iteration number), in the
// manner of vegeta's Pacer: the running code asks "what now?" with the elapsed time, so
// a late wake-up never accumulates into drift and the plans are tested without a clock.

// mulDiv returns floor(a*b/c) for a, b >= 0 and c > 0 without overflowing the
// intermediate product, saturating at math.MaxInt64.
func mulDiv(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// ceilMulDiv returns ceil(a*b/c) for a, b >= 0 and c > 0, saturating.
func ceilMulDiv(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return math.MaxInt64
	}
	q, r := bits.Div64(hi, lo, uint64(c))
	if r != 0 {
		q++
	}
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// rampVUs is ramping-vus' VU count over time. Between two targets the count moves in
// unit steps spread evenly over the stage: going from a to b over d, the i-th step
// (i = 1..|b-a|) happens i·d/|b-a| into the stage, so the count is
// a ± floor(|b-a|·t/d). A stage of duration 0 jumps to its target at once.
type rampVUs struct {
	start  int64
	stages []Stage
}

// at returns the VU count at t since the scenario start and the next time after t at
// which it may change. ok is false from the end of the last stage on, with vus the last
// target and next the end.
func (r rampVUs) at(t time.Duration) (vus int64, next time.Duration, ok bool) {
	from, begin := r.start, time.Duration(0)
	for _, st := range r.stages {
		end := begin + st.Duration
		if t < end {
			diff := st.Target - from
			steps := diff
			if steps < 0 {
				steps = -steps
			}
			if steps == 0 {
				return from, end, true
			}
			into := int64(t - begin)
			k := mulDiv(steps, into, int64(st.Duration))
			if diff < 0 {
				vus = from - k
			} else {
				vus = from + k
			}
			next = begin + time.Duration(ceilMulDiv(k+1, int64(st.Duration), steps))
			if next > end {
				next = end
			}
			return vus, next, true
		}
		from, begin = st.Target, end
	}
	return from, begin, false
}

// arrivals is an arrival-rate plan: at(k) is when iteration k (0-based) starts, as an
// offset from the scenario start, and false once the plan has no iteration k.
type arrivals interface {
	at(k int64) (time.Duration, bool)
	end() time.Duration
}

// constantArrivals starts rate iterations per unit, iteration k at floor(k·unit/rate),
// the first at once. Over [0, T) that is exactly ceil(T·rate/unit) iterations.
type constantArrivals struct {
	rate     int64
	unit     time.Duration
	duration time.Duration
}

func (c constantArrivals) at(k int64) (time.Duration, bool) {
	t := time.Duration(mulDiv(k, int64(c.unit), c.rate))
	return t, t < c.duration
}

func (c constantArrivals) end() time.Duration { return c.duration }

// rampingArrivals follows a rate that moves linearly between stage targets. With N(t)
// the integral of the rate (iterations scheduled by t), iteration k starts at the first
// t where N(t) reaches k and is still growing, so a run of length T starts ceil(N(T))
// iterations, the first at once unless the rate starts at 0 and stays there.
type rampingArrivals struct {
	segs  []rampSeg
	total time.Duration
}

type rampSeg struct {
	begin, dur time.Duration
	a, b       float64 // rate at the start and the end, iterations per nanosecond
	n0         float64 // N at the start of the segment
	kEnd       int64   // iterations with k < kEnd start before the segment ends
}

func newRampingArrivals(startRate int64, unit time.Duration, stages []Stage) rampingArrivals {
	var r rampingArrivals
	// Numerators of N·2·unit, exact, so segment boundaries are not off by one from
	// floating-point rounding.
	num := new(big.Int)
	den := new(big.Int).Mul(big.NewInt(2), big.NewInt(int64(unit)))
	from := startRate
	for _, st := range stages {
		n0, _ := new(big.Rat).SetFrac(num, den).Float64()
		term := new(big.Int).Mul(big.NewInt(from+st.Target), big.NewInt(int64(st.Duration)))
		num.Add(num, term)
		q, m := new(big.Int).QuoRem(num, den, new(big.Int))
		if m.Sign() > 0 {
			q.Add(q, big.NewInt(1))
		}
		kEnd := int64(math.MaxInt64)
		if q.IsInt64() {
			kEnd = q.Int64()
		}
		r.segs = append(r.segs, rampSeg{
			begin: r.total, dur: st.Duration,
			a: float64(from) / float64(unit), b: float64(st.Target) / float64(unit),
			n0: n0, kEnd: kEnd,
		})
		r.total += st.Duration
		from = st.Target
	}
	return r
}

func (r rampingArrivals) end() time.Duration { return r.total }

func (r rampingArrivals) at(k int64) (time.Duration, bool) {
	// Binary search for the first segment that ends past iteration k.
	lo, hi := 0, len(r.segs)
	for lo < hi {
		m := (lo + hi) / 2
		if r.segs[m].kEnd > k {
			hi = m
		} else {
			lo = m + 1
		}
	}
	if lo == len(r.segs) {
		return r.total, false
	}
	s := r.segs[lo]
	y := float64(k) - s.n0
	if y < 0 {
		y = 0
	}
	// Solve a·τ + (b-a)·τ²/(2d) = y for τ in the form that is stable when a is 0.
	d := float64(s.dur)
	den := s.a + math.Sqrt(math.Max(0, s.a*s.a+2*(s.b-s.a)*y/d))
	tau := 0.0
	if den > 0 {
		tau = 2 * y / den
	}
	if tau >= d {
		tau = math.Nextafter(d, 0)
	}
	return s.begin + time.Duration(tau), true
}

// length is how long the executor itself runs, gracefulStop excluded: the window it
// starts iterations in (an upper bound for the iteration executors).
func length(sc *Scenario) time.Duration {
	switch sc.Executor {
	case SharedIterations, PerVUIterations:
		return sc.MaxDuration
	case ConstantVUs, ConstantArrivalRate:
		return sc.Duration
	}
	var total time.Duration
	for _, st := range sc.Stages {
		total += st.Duration
	}
	return total
}

// vusOf returns the VUs a scenario initialises before it starts (planned) and the most
// it may hold (most), as k6 plans them.
func vusOf(sc *Scenario) (planned, most int64) {
	switch sc.Executor {
	case RampingVUs:
		n := max(sc.StartVUs, maxTarget(sc.Stages))
		return n, n
	case ConstantArrivalRate, RampingArrivalRate:
		return sc.PreAllocatedVUs, sc.MaxVUs
	}
	return sc.VUs, sc.VUs
}

// TotalDuration is the longest the scenarios can take together: the maximum of
// startTime + the executor's own duration + gracefulStop. It is exact for the
// time-based executors and an upper bound for the iteration-based ones (which count
// maxDuration).
func TotalDuration(scenarios []Scenario) time.Duration {
	var total time.Duration
	for i := range scenarios {
		sc := &scenarios[i]
		total = max(total, sc.StartTime+length(sc)+sc.GracefulStop)
	}
	return total
}

// peakVUs is the maximum, over time, of the sum of per-scenario VU needs of the
// scenarios whose windows [startTime, startTime+length+gracefulStop) overlap, so a
// later scenario reuses the VUs of one that has ended, as in k6's execution plan.
func peakVUs(scenarios []Scenario, need func(*Scenario) int64) int64 {
	var peak int64
	for i := range scenarios {
		// The sum is highest at some scenario's start.
		at := scenarios[i].StartTime
		var sum int64
		for j := range scenarios {
			sc := &scenarios[j]
			if sc.StartTime <= at && at < sc.StartTime+length(sc)+sc.GracefulStop {
				sum += need(sc)
			}
		}
		peak = max(peak, sum)
	}
	return peak
}
