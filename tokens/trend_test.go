package tokens

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// k6Percentile is a brute-force reference for k6's p(N): sort a copy, interpolate.
func k6Percentile(vals []float64, p float64) float64 {
	if len(vals) == 0 {
		return 0
	}
	s := slices.Clone(vals)
	slices.Sort(s)
	return pctSorted(s, p)
}

// pctSorted is k6's interpolation over already-sorted samples.
func pctSorted(s []float64, p float64) float64 {
	i := p / 100 * float64(len(s)-1)
	lo, hi := int(math.Floor(i)), int(math.Ceil(i))
	return s[lo] + (s[hi]-s[lo])*(i-math.Floor(i))
}

func TestTrendSinkKnownValues(t *testing.T) {
	one2ten := []float64{7, 3, 10, 1, 5, 2, 9, 4, 8, 6} // 1..10 unsorted
	tests := []struct {
		name string
		vals []float64
		p    float64
		want float64
	}{
		{"empty", nil, 50, 0},
		{"single", []float64{42}, 99, 42},
		{"p(0) is min", one2ten, 0, 1},
		{"p(100) is max", one2ten, 100, 10},
		{"med of 1..10 interpolates", one2ten, 50, 5.5},
		{"p(90) of 1..10", one2ten, 90, 9.1},
		{"p(95) of 1..10", one2ten, 95, 9.55},
		{"p above 100 clamps", one2ten, 150, 10},
		{"p below 0 clamps", one2ten, -5, 1},
		{"negatives and zero", []float64{-3, 0, 3}, 25, -1.5},
		{"no overflow between ±MaxFloat64", []float64{-math.MaxFloat64, math.MaxFloat64}, 50, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewTrendSink()
			for _, v := range tt.vals {
				s.Add(v)
			}
			assert.InDelta(t, tt.want, s.Percentile(tt.p), 1e-12)
			assert.True(t, s.Exact())
		})
	}
}

func TestTrendSinkStats(t *testing.T) {
	var s TrendSink // zero value is usable
	for _, v := range []float64{4, 1, 3, 2} {
		s.Add(v)
	}
	s.Add(math.NaN())
	s.Add(math.Inf(1))
	s.Add(math.Inf(-1))
	tests := []struct {
		stat string
		want float64
		ok   bool
	}{
		{"count", 4, true},
		{"sum", 10, true},
		{"avg", 2.5, true},
		{"min", 1, true},
		{"max", 4, true},
		{"med", 2.5, true},
		{"p(0)", 1, true},
		{"p(100)", 4, true},
		{"p(50)", 2.5, true},
		{"p(90)", 3.7, true},
		{"p(99.9)", 3.997, true},
		{"p(101)", 0, false},
		{"p()", 0, false},
		{"p(-1)", 0, false},
		{"p(1e1)", 0, false},
		{"p( 9)", 0, false},
		{"p(9.)", 0, false},
		{"p(.9)", 0, false},
		{"p(9.9.9)", 0, false},
		{"p(NaN)", 0, false},
		{"P(90)", 0, false},
		{"rate", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.stat, func(t *testing.T) {
			v, ok := s.Stat(tt.stat)
			require.Equal(t, tt.ok, ok)
			assert.InDelta(t, tt.want, v, 1e-12)
		})
	}
}

func TestTrendSinkEmptyStats(t *testing.T) {
	s := NewTrendSink(WithExactLimit(0))
	for _, name := range []string{"count", "sum", "avg", "min", "max", "med", "p(95)"} {
		v, ok := s.Stat(name)
		assert.True(t, ok, name)
		assert.Zero(t, v, name)
	}
}

// Exact mode equals the brute-force k6 computation at every percentile, whatever the
// insertion order and however queries interleave with adds (the sorted cache).
func TestTrendSinkExactMatchesK6(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 50 {
		n := 1 + r.IntN(2000)
		s := NewTrendSink()
		var vals []float64
		for i := range n {
			v := math.Round(r.NormFloat64()*1000) / 10 // duplicates happen
			s.Add(v)
			vals = append(vals, v)
			if i%97 == 0 { // query mid-way: the cache must be invalidated by later adds
				require.Equal(t, k6Percentile(vals, 50), s.Med())
			}
		}
		require.True(t, s.Exact())
		for _, p := range []float64{0, 0.1, 1, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100, r.Float64() * 100} {
			require.Equal(t, k6Percentile(vals, p), s.Percentile(p), "trial %d n %d p %v", trial, n, p)
		}
	}
}

// p(50) of a known distribution: the median of Exp(1) is ln 2.
func TestTrendSinkMedianOfKnownDistribution(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, limit := range []int{DefaultExactLimit, 0} {
		t.Run("limit "+strconv.Itoa(limit), func(t *testing.T) {
			s := NewTrendSink(WithExactLimit(limit))
			for range 200_000 {
				s.Add(r.ExpFloat64())
			}
			assert.Equal(t, limit > 0 && 200_000 <= limit, s.Exact())
			// Standard error of the sample median of Exp(1) at n=2e5 is ~0.0022.
			assert.InDelta(t, math.Ln2, s.Med(), 0.01)
			assert.InDelta(t, 1.0, s.Avg(), 0.01)
		})
	}
}

// The sketch stays within 0.1% (in fact SketchRelativeError) of the exact percentile on
// a million samples of several distributions.
func TestTrendSinkSketchAccuracy(t *testing.T) {
	const n = 1_000_000
	dists := []struct {
		name string
		gen  func(r *rand.Rand) float64
	}{
		{"lognormal ms", func(r *rand.Rand) float64 { return math.Exp(3 + 1.5*r.NormFloat64()) }},
		{"uniform", func(r *rand.Rand) float64 { return r.Float64() * 1000 }},
		{"constant", func(*rand.Rand) float64 { return 37.5 }},
		{"negative lognormal", func(r *rand.Rand) float64 { return -math.Exp(r.NormFloat64()) }},
	}
	ps := []float64{0, 0.1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100}
	for i, d := range dists {
		t.Run(d.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 11))
			sk := NewTrendSink(WithExactLimit(0))
			vals := make([]float64, n)
			for j := range vals {
				vals[j] = d.gen(r)
				sk.Add(vals[j])
			}
			require.False(t, sk.Exact())
			slices.Sort(vals)
			for _, p := range ps {
				want := pctSorted(vals, p)
				got := sk.Percentile(p)
				rel := math.Abs(got-want) / math.Abs(want)
				assert.LessOrEqual(t, rel, 0.001, "p(%v): got %v want %v", p, got, want)
				assert.LessOrEqual(t, rel, SketchRelativeError*(1+1e-9), "p(%v)", p)
			}
			assert.Equal(t, vals[0], sk.Min())
			assert.Equal(t, vals[n-1], sk.Max())
			assert.Equal(t, int64(n), sk.Count())
		})
	}
}

// Memory stays bounded however wide the range: the bucket span per sign is capped and
// values far below the largest collapse into the lowest kept bucket.
func TestTrendSinkSketchBoundedMemory(t *testing.T) {
	s := NewTrendSink(WithExactLimit(0))
	r := rand.New(rand.NewPCG(12, 13))
	for range 200_000 {
		v := math.Pow(10, r.Float64()*600-300) // 1e-300 .. 1e300
		if r.IntN(2) == 0 {
			v = -v
		}
		s.Add(v)
	}
	assert.LessOrEqual(t, len(s.sk.pos.bins), 2*sketchMaxBins)
	assert.LessOrEqual(t, len(s.sk.neg.bins), 2*sketchMaxBins)
	assert.LessOrEqual(t, s.sk.pos.maxKey-s.sk.pos.minKey, sketchMaxBins-1)
	assert.Equal(t, uint64(200_000), s.sk.pos.n+s.sk.neg.n)
	// The top of the range is unaffected by the collapse.
	p999 := s.Percentile(99.9)
	assert.Greater(t, p999, 1e290)
}

func TestTrendSinkSwitchesAtLimit(t *testing.T) {
	s := NewTrendSink(WithExactLimit(3))
	for i := range 3 {
		s.Add(float64(i))
	}
	assert.True(t, s.Exact())
	s.Add(3)
	assert.False(t, s.Exact())
	assert.Nil(t, s.vals, "exact samples are released after the switch")
	assert.InEpsilon(t, 1.5, s.Med(), SketchRelativeError)
	s.Reset()
	assert.True(t, s.Exact())
	assert.Zero(t, s.Count())
	s.Add(5)
	assert.Equal(t, 5.0, s.Med())
}

func TestParsePercentile(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"p(90)", 90, true}, {"p(99.9)", 99.9, true}, {"p(0)", 0, true}, {"p(100)", 100, true},
		{"p(100.0)", 100, true}, {"p(100.01)", 0, false}, {"p(007)", 7, true},
		{"p(+5)", 0, false}, {"p(0x10)", 0, false}, {"p(1_0)", 0, false}, {"p(Inf)", 0, false},
		{"p(90", 0, false}, {"p90)", 0, false}, {"p()", 0, false}, {"(90)", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := ParsePercentile(tt.in)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestTrendSinkAddDoesNotAllocate(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 15))
	vals := make([]float64, 4096)
	for i := range vals {
		vals[i] = math.Exp(2 + r.NormFloat64())
	}
	for _, tc := range []struct {
		name  string
		limit int
	}{{"exact", len(vals)}, {"sketch", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewTrendSink(WithExactLimit(tc.limit))
			for _, v := range vals { // warm-up: slice capacity, sketch range
				s.Add(v)
			}
			s.Reset()
			i := 0
			allocs := testing.AllocsPerRun(len(vals)-1, func() {
				s.Add(vals[i])
				i++
			})
			assert.Zero(t, allocs)
			assert.Equal(t, tc.limit > 0, s.Exact())
		})
	}
}

// Queries interleaved with every add exercise the sorted-prefix cache and the merge of a
// short unsorted tail; every answer must equal a fresh sort.
func TestTrendSinkInterleavedQueries(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 17))
	s := NewTrendSink()
	var vals []float64
	for i := range 1500 {
		v := float64(r.IntN(200)) - 100
		if i%300 == 299 { // now and then a burst of adds before the next query
			for range 50 {
				s.Add(v)
				vals = append(vals, v)
				v = float64(r.IntN(200)) - 100
			}
		}
		s.Add(v)
		vals = append(vals, v)
		for _, p := range []float64{0, 37, 50, 99, 100} {
			require.Equal(t, k6Percentile(vals, p), s.Percentile(p), "after %d adds, p(%v)", len(vals), p)
		}
	}
	require.True(t, slices.IsSorted(s.vals))
}
