package tokens

import (
	"math"
	"slices"
	"strconv"
)

// DefaultExactLimit is how many samples a TrendSink keeps verbatim before it switches to
// the bounded-memory sketch: 65,536 samples (512 KiB) cover a typical benchmark's
// per-request trends exactly, while a soak test's millions of ITL gaps stay bounded.
const DefaultExactLimit = 1 << 16

// SketchRelativeError is the largest relative error of any percentile a TrendSink
// reports once it has switched to its sketch (2^-11 ≈ 0.049%). Min, Max, Count, Sum and
// Avg stay exact in both modes.
const SketchRelativeError = 1.0 / (1 << (sketchSubBits + 1))

// TrendOption configures a TrendSink.
type TrendOption func(*TrendSink)

// WithExactLimit keeps up to n samples verbatim (exact percentiles); beyond n the sink
// switches to the sketch. n ≤ 0 means sketch from the first sample. Sinks that will be
// merged must share the limit for the merge to equal record-all.
func WithExactLimit(n int) TrendOption {
	return func(s *TrendSink) {
		s.limit = max(n, 0)
		s.limitSet = true
	}
}

// TrendSink is k6's Trend aggregation: count, sum, min, max, avg, med and p(N).
//
// Up to its exact limit it keeps every sample and computes percentiles exactly as k6
// does; past the limit it folds the samples into a log-linear sketch whose percentiles
// are within SketchRelativeError of the exact ones, in bounded memory. The zero value is
// ready to use with DefaultExactLimit. Not safe for concurrent use: keep one per worker
// and Merge after the workers have been joined.
type TrendSink struct {
	limit    int
	limitSet bool

	n        int64
	sum, c   float64 // Neumaier compensated sum
	min, max float64

	vals    []float64 // exact mode: every sample
	nsorted int       // vals[:nsorted] is sorted (cached between queries)
	scratch []float64 // reused by sortVals to merge a short unsorted tail

	sk       *sketch // sketch mode when non-nil and inSketch
	inSketch bool
}

// NewTrendSink returns a TrendSink configured by opts.
func NewTrendSink(opts ...TrendOption) *TrendSink {
	s := &TrendSink{}
	for _, o := range opts {
		o(s)
	}
	return s
}

func (s *TrendSink) exactLimit() int {
	if s.limitSet {
		return s.limit
	}
	return DefaultExactLimit
}

// Add records one sample. NaN and ±Inf are ignored: no percentile or average of them
// means anything, and a single Inf would poison Sum and Avg.
func (s *TrendSink) Add(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	if s.n == 0 {
		s.min, s.max = v, v
	} else {
		s.min = min(s.min, v)
		s.max = max(s.max, v)
	}
	s.n++
	s.addSum(v, 0)
	if s.inSketch {
		s.sk.add(v)
		return
	}
	if int(s.n) > s.exactLimit() {
		s.toSketch()
		s.sk.add(v)
		return
	}
	if s.nsorted == len(s.vals) && (s.nsorted == 0 || v >= s.vals[s.nsorted-1]) {
		s.nsorted++
	}
	s.vals = append(s.vals, v)
}

// addSum adds v (and an already-accumulated compensation c) with Neumaier's algorithm,
// so sums of millions of small samples do not drift and a merge stays within a few ulps
// of recording everything in one sink.
func (s *TrendSink) addSum(v, c float64) {
	s.sum, s.c = neumaier(s.sum, s.c, v)
	s.c += c
}

// toSketch moves the exact samples into the sketch and releases them.
func (s *TrendSink) toSketch() {
	if s.sk == nil {
		s.sk = &sketch{}
	} else {
		s.sk.reset()
	}
	for _, v := range s.vals {
		s.sk.add(v)
	}
	s.vals, s.scratch = nil, nil
	s.nsorted = 0
	s.inSketch = true
}

// Reset empties the sink, keeping its allocations and options for reuse.
func (s *TrendSink) Reset() {
	s.n, s.sum, s.c, s.min, s.max = 0, 0, 0, 0, 0
	s.vals = s.vals[:0]
	s.nsorted = 0
	if s.sk != nil {
		s.sk.reset()
	}
	s.inSketch = false
}

// Exact reports whether percentiles are exact (the sink has not switched to its sketch).
func (s *TrendSink) Exact() bool { return !s.inSketch }

// Count is the number of samples recorded.
func (s *TrendSink) Count() int64 { return s.n }

// Sum is the compensated sum of the samples.
func (s *TrendSink) Sum() float64 { return s.sum + s.c }

// Min is the smallest sample, 0 when empty (as k6 reports it).
func (s *TrendSink) Min() float64 { return s.min }

// Max is the largest sample, 0 when empty.
func (s *TrendSink) Max() float64 { return s.max }

// Avg is Sum/Count, 0 when empty.
func (s *TrendSink) Avg() float64 {
	if s.n == 0 {
		return 0
	}
	return s.Sum() / float64(s.n)
}

// Med is p(50).
func (s *TrendSink) Med() float64 { return s.Percentile(50) }

// Percentile is k6's p(N) for p in [0, 100] (clamped): linear interpolation between the
// sorted samples at ranks ⌊i⌋ and ⌈i⌉, i = p/100·(n−1). 0 when empty. In sketch mode
// the samples at those ranks are bucket midpoints (clamped to [Min, Max], and exactly
// Min and Max at the ends), so the result is within SketchRelativeError of the exact
// one whenever both neighbours have the same sign.
func (s *TrendSink) Percentile(p float64) float64 {
	switch {
	case s.n == 0:
		return 0
	case s.n == 1:
		return s.min
	case math.IsNaN(p):
		return math.NaN()
	}
	p = min(max(p, 0), 100)
	i := p / 100 * float64(s.n-1)
	fl := math.Floor(i)
	f := i - fl
	lo := int64(fl)
	hi := int64(math.Ceil(i))
	if s.inSketch {
		j := s.rankValue(lo)
		if hi == lo {
			return j
		}
		return lerp(j, s.rankValue(hi), f)
	}
	s.sortVals()
	return lerp(s.vals[lo], s.vals[hi], f)
}

// lerp is k6's interpolation j + (k−j)·f, except where k−j overflows (samples near
// ±MaxFloat64 of both signs), which would report ±Inf outside [Min, Max].
func lerp(j, k, f float64) float64 {
	d := k - j
	if math.IsInf(d, 0) {
		return j*(1-f) + k*f
	}
	return j + d*f
}

// sortVals sorts the exact samples. A query after a few more adds (thresholds and live
// summaries query every few seconds) sorts only the new tail and merges it into the
// sorted prefix, O(n + t·log t) instead of a full sort.
func (s *TrendSink) sortVals() {
	n := len(s.vals)
	if s.nsorted == n {
		return
	}
	tail := s.vals[s.nsorted:]
	if len(tail) > n/8 {
		slices.Sort(s.vals)
		s.nsorted = n
		return
	}
	slices.Sort(tail)
	if s.nsorted > 0 && tail[0] < s.vals[s.nsorted-1] {
		// Merge from the back so the prefix can stay in place.
		s.scratch = append(s.scratch[:0], tail...)
		i, j := s.nsorted-1, len(s.scratch)-1
		for w := n - 1; j >= 0; w-- {
			if i >= 0 && s.vals[i] > s.scratch[j] {
				s.vals[w] = s.vals[i]
				i--
			} else {
				s.vals[w] = s.scratch[j]
				j--
			}
		}
	}
	s.nsorted = n
}

// rankValue is the sketch's estimate of the sample at 0-based rank i.
func (s *TrendSink) rankValue(i int64) float64 {
	switch i {
	case 0:
		return s.min
	case s.n - 1:
		return s.max
	}
	return min(max(s.sk.valueAt(uint64(i)), s.min), s.max)
}

// Merge adds everything o recorded, leaving o unchanged. The result is the same as if
// this sink had recorded o's samples itself: Count, Min, Max and every percentile are
// identical (in exact mode, in sketch mode and across the switch), Sum and Avg agree to
// within float rounding of the compensated sum (≪ 1e-9 relative).
func (s *TrendSink) Merge(o *TrendSink) {
	if o == nil || o.n == 0 || o == s {
		if o == s && s.n > 0 {
			s.mergeSelf()
		}
		return
	}
	if s.n == 0 {
		s.min, s.max = o.min, o.max
	} else {
		s.min = min(s.min, o.min)
		s.max = max(s.max, o.max)
	}
	s.n += o.n
	s.addSum(o.sum, o.c)
	if !s.inSketch && !o.inSketch && int(s.n) <= s.exactLimit() {
		if len(s.vals) == 0 {
			s.nsorted = o.nsorted
		}
		s.vals = append(s.vals, o.vals...)
		return
	}
	if !s.inSketch {
		s.toSketch()
	}
	if o.inSketch {
		s.sk.merge(o.sk)
		return
	}
	for _, v := range o.vals {
		s.sk.add(v)
	}
}

// mergeSelf doubles every sample (s.Merge(s)).
func (s *TrendSink) mergeSelf() {
	cp := &TrendSink{n: s.n, sum: s.sum, c: s.c, min: s.min, max: s.max,
		vals: slices.Clone(s.vals), nsorted: s.nsorted, inSketch: s.inSketch}
	if s.inSketch {
		cp.sk = &sketch{}
		cp.sk.merge(s.sk)
	}
	s.Merge(cp)
}

// Stat returns the k6 trend statistic called name: "count", "sum", "avg", "min", "med",
// "max" or "p(N)" with N a decimal in [0, 100] ("p(90)", "p(99.9)"), the names used by
// thresholds and --summary-trend-stats. ok is false for any other name.
func (s *TrendSink) Stat(name string) (v float64, ok bool) {
	switch name {
	case "count":
		return float64(s.n), true
	case "sum":
		return s.Sum(), true
	case "avg":
		return s.Avg(), true
	case "min":
		return s.Min(), true
	case "med":
		return s.Med(), true
	case "max":
		return s.Max(), true
	}
	p, ok := ParsePercentile(name)
	if !ok {
		return 0, false
	}
	return s.Percentile(p), true
}

// ParsePercentile parses a k6 percentile stat name "p(N)", N being digits with an
// optional fraction, 0 ≤ N ≤ 100. It accepts nothing else (no sign, exponent, spaces or
// hex), so names that k6 rejects are rejected here too.
func ParsePercentile(name string) (float64, bool) {
	if len(name) < 4 || name[0] != 'p' || name[1] != '(' || name[len(name)-1] != ')' {
		return 0, false
	}
	num := name[2 : len(name)-1]
	dot := false
	for i := 0; i < len(num); i++ {
		switch c := num[i]; {
		case c >= '0' && c <= '9':
		case c == '.' && !dot && i > 0 && i < len(num)-1:
			dot = true
		default:
			return 0, false
		}
	}
	p, err := strconv.ParseFloat(num, 64)
	if err != nil || p < 0 || p > 100 {
		return 0, false
	}
	return p, true
}
