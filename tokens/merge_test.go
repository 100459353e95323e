package tokens

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// distributions feed the merge property test; "wide" spans far more than the sketch's
// bucket span so that collapsing is exercised, "mixed" has negatives and zeros.
var distributions = []struct {
	name string
	gen  func(r *rand.Rand) float64
}{
	{"lognormal", func(r *rand.Rand) float64 { return math.Exp(3 + 1.5*r.NormFloat64()) }},
	{"uniform", func(r *rand.Rand) float64 { return r.Float64() * 1000 }},
	{"constant", func(*rand.Rand) float64 { return 12.5 }},
	{"mixed", func(r *rand.Rand) float64 {
		switch r.IntN(4) {
		case 0:
			return 0
		case 1:
			return -r.ExpFloat64() * 10
		}
		return r.ExpFloat64() * 10
	}},
	{"wide", func(r *rand.Rand) float64 {
		v := math.Pow(10, r.Float64()*40-20)
		if r.IntN(3) == 0 {
			v = -v
		}
		return v
	}},
	{"growing", nil}, // filled in by the test: increasing magnitudes re-centre the stores
}

var mergePercentiles = []float64{0, 0.1, 1, 10, 25, 50, 75, 90, 95, 99, 99.9, 100}

// requireSameTrend checks that m (merged) equals all (recorded everything): counts,
// extremes, mode and every percentile identical; sums equal to 1e-9 relative.
func requireSameTrend(t *testing.T, all, m *TrendSink, msg string) {
	t.Helper()
	require.Equal(t, all.Count(), m.Count(), msg)
	require.Equal(t, all.Exact(), m.Exact(), msg)
	require.Equal(t, all.Min(), m.Min(), msg)
	require.Equal(t, all.Max(), m.Max(), msg)
	for _, p := range mergePercentiles {
		require.Equal(t, all.Percentile(p), m.Percentile(p), "%s p(%v)", msg, p)
	}
	require.InDelta(t, all.Sum(), m.Sum(), 1e-9*math.Max(1, math.Abs(all.Sum())), msg)
	require.InDelta(t, all.Avg(), m.Avg(), 1e-9*math.Max(1, math.Abs(all.Avg())), msg)
}

// Splitting samples across k sinks in random ways and merging them (in random order,
// or pairwise as a tree) is identical to one sink that recorded everything: in exact
// mode, in sketch mode, and when exact parts merge into a total past the limit.
func TestTrendSinkMergeEqualsRecordAll(t *testing.T) {
	const limit = 64
	sizes := []int{0, 1, 2, 17, limit - 1, limit, limit + 1, 3 * limit, 2500}
	ks := []int{1, 2, 3, 4, 7, 12}
	r := rand.New(rand.NewPCG(21, 22))
	splits := []string{"random", "contiguous", "skewed"}
	orders := []string{"sequential", "tree"}
	c := 0
	for di, d := range distributions {
		for _, n := range sizes {
			for _, k := range ks {
				// Every split and order meets every distribution and size across the k loop.
				split, order := splits[c%len(splits)], orders[c/len(splits)%len(orders)]
				c++
				name := fmt.Sprintf("%s/n=%d/k=%d/%s/%s", d.name, n, k, split, order)
				vals := make([]float64, n)
				for i := range vals {
					if d.gen == nil {
						vals[i] = math.Pow(1.02, float64(i)) * 1e-3 * float64(1+di)
					} else {
						vals[i] = d.gen(r)
					}
				}
				all := NewTrendSink(WithExactLimit(limit))
				for _, v := range vals {
					all.Add(v)
				}
				parts := make([]*TrendSink, k)
				for i := range parts {
					parts[i] = NewTrendSink(WithExactLimit(limit))
				}
				for i, v := range vals {
					var j int
					switch split {
					case "random":
						j = r.IntN(k)
					case "contiguous":
						j = i * k / max(n, 1)
					case "skewed": // most samples in one part, the rest spread thin
						if r.IntN(10) > 0 {
							j = 0
						} else {
							j = r.IntN(k)
						}
					}
					parts[j].Add(v)
				}
				m := mergeAll(r, parts, order, limit)
				requireSameTrend(t, all, m, name)
			}
		}
	}
}

func mergeAll(r *rand.Rand, parts []*TrendSink, order string, limit int) *TrendSink {
	if order == "tree" {
		for len(parts) > 1 {
			var next []*TrendSink
			for i := 0; i < len(parts); i += 2 {
				if i+1 < len(parts) {
					parts[i].Merge(parts[i+1])
				}
				next = append(next, parts[i])
			}
			parts = next
		}
		return parts[0]
	}
	m := NewTrendSink(WithExactLimit(limit))
	for _, i := range r.Perm(len(parts)) {
		m.Merge(parts[i])
	}
	return m
}

// Merge leaves its argument unchanged and tolerates nil, empty and itself.
func TestTrendSinkMergeEdgeCases(t *testing.T) {
	for _, limit := range []int{0, 4, 1000} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			o := NewTrendSink(WithExactLimit(limit))
			for _, v := range []float64{3, 1, 2} {
				o.Add(v)
			}
			before := o.Percentile(50)
			s := NewTrendSink(WithExactLimit(limit))
			s.Merge(nil)
			s.Merge(NewTrendSink())
			s.Merge(o)
			s.Merge(o)
			require.Equal(t, int64(3), o.Count())
			require.Equal(t, before, o.Percentile(50))
			require.Equal(t, int64(6), s.Count())

			// s.Merge(s) doubles every sample.
			all := NewTrendSink(WithExactLimit(limit))
			for range 4 {
				for _, v := range []float64{3, 1, 2} {
					all.Add(v)
				}
			}
			s.Merge(s)
			requireSameTrend(t, all, s, "self")
		})
	}
}

// A sink that switched to the sketch merged into an exact one (and the reverse) still
// equals record-all.
func TestTrendSinkMergeMixedModes(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	const limit = 100
	big, small := NewTrendSink(WithExactLimit(limit)), NewTrendSink(WithExactLimit(limit))
	all := NewTrendSink(WithExactLimit(limit))
	for range 150 {
		v := r.ExpFloat64()
		big.Add(v)
		all.Add(v)
	}
	for range 10 {
		v := -r.ExpFloat64()
		small.Add(v)
		all.Add(v)
	}
	require.False(t, big.Exact())
	require.True(t, small.Exact())
	a := NewTrendSink(WithExactLimit(limit))
	a.Merge(small)
	a.Merge(big)
	requireSameTrend(t, all, a, "exact then sketch")
	b := NewTrendSink(WithExactLimit(limit))
	b.Merge(big)
	b.Merge(small)
	requireSameTrend(t, all, b, "sketch then exact")
}
