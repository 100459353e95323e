package tokens

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCounterSink(t *testing.T) {
	tests := []struct {
		name      string
		add       []float64
		elapsed   time.Duration
		sum, rate float64
		count     int64
	}{
		{"zero value", nil, time.Second, 0, 0, 0},
		{"tokens", []float64{10, 20, 30}, 2 * time.Second, 60, 30, 3},
		{"zero elapsed has no rate", []float64{5}, 0, 5, 0, 1},
		{"negative elapsed has no rate", []float64{5}, -time.Second, 5, 0, 1},
		{"compensated sum of tenths", repeat(0.1, 1000), time.Second, 100, 100, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s CounterSink
			for _, v := range tt.add {
				s.Add(v)
			}
			assert.Equal(t, tt.sum, s.Sum()) // exact: compensation recovers 100 from 1000×0.1
			assert.Equal(t, tt.count, s.Count())
			assert.InDelta(t, tt.rate, s.Rate(tt.elapsed), 1e-12)
		})
	}
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestCounterSinkMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for k := 1; k <= 5; k++ {
		var all CounterSink
		parts := make([]CounterSink, k)
		for range 10_000 {
			v := r.Float64() * 1000
			all.Add(v)
			parts[r.IntN(k)].Add(v)
		}
		var m CounterSink
		m.Merge(nil)
		for i := range parts {
			m.Merge(&parts[i])
		}
		assert.Equal(t, all.Count(), m.Count())
		assert.InEpsilon(t, all.Sum(), m.Sum(), 1e-12)
	}
}

func TestGaugeSink(t *testing.T) {
	type add struct {
		v     float64
		stamp int64
	}
	tests := []struct {
		name            string
		adds            []add
		value, min, max float64
	}{
		{"zero value", nil, 0, 0, 0},
		{"last wins", []add{{5, 1}, {3, 2}, {9, 3}, {4, 4}}, 4, 3, 9},
		{"older stamp counts for min/max only", []add{{5, 10}, {1, 2}, {20, 3}}, 5, 1, 20},
		{"equal stamps: larger value wins", []add{{5, 1}, {7, 1}, {6, 1}}, 7, 5, 7},
		{"negative values", []add{{-5, 1}, {-7, 2}}, -7, -7, -5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s GaugeSink
			for _, a := range tt.adds {
				s.AddAt(a.v, a.stamp)
			}
			assert.Equal(t, tt.value, s.Value())
			assert.Equal(t, tt.min, s.Min())
			assert.Equal(t, tt.max, s.Max())
			assert.Equal(t, int64(len(tt.adds)), s.Count())
		})
	}
}

func TestGaugeSinkAddStampsMonotonically(t *testing.T) {
	var s GaugeSink
	s.Add(1)
	first := s.Stamp()
	s.Add(2)
	assert.GreaterOrEqual(t, s.Stamp(), first)
	assert.Equal(t, 2.0, s.Value())
}

// Merging gauges in any order and grouping equals one gauge that saw every value.
func TestGaugeSinkMergeOrderIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		n := 1 + r.IntN(50)
		k := 1 + r.IntN(6)
		var all GaugeSink
		parts := make([]GaugeSink, k)
		for range n {
			v := float64(r.IntN(10)) // few values and stamps: ties happen
			st := int64(r.IntN(8))
			all.AddAt(v, st)
			parts[r.IntN(k)].AddAt(v, st)
		}
		var m GaugeSink
		for _, i := range r.Perm(k) {
			m.Merge(&parts[i])
		}
		require.Equal(t, all.Value(), m.Value(), "trial %d", trial)
		require.Equal(t, all.Stamp(), m.Stamp(), "trial %d", trial)
		require.Equal(t, all.Min(), m.Min())
		require.Equal(t, all.Max(), m.Max())
		require.Equal(t, all.Count(), m.Count())
	}
}

func TestRateSink(t *testing.T) {
	tests := []struct {
		name         string
		add          []float64
		trues, total int64
		rate         float64
	}{
		{"zero value", nil, 0, 0, 0},
		{"non-zero is true", []float64{1, 0, -2, 0.5}, 3, 4, 0.75},
		{"NaN is non-zero, as in k6", []float64{math.NaN(), 0}, 1, 2, 0.5},
		{"all false", []float64{0, 0}, 0, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s, b RateSink
			for _, v := range tt.add {
				s.Add(v)
				b.AddBool(v != 0)
			}
			assert.Equal(t, tt.trues, s.Trues())
			assert.Equal(t, tt.total, s.Total())
			assert.Equal(t, tt.rate, s.Rate())
			assert.Equal(t, s, b)
			var m RateSink
			m.Merge(&s)
			m.Merge(&b)
			assert.Equal(t, 2*tt.trues, m.Trues())
			assert.Equal(t, 2*tt.total, m.Total())
		})
	}
}

func TestSinksReset(t *testing.T) {
	var c CounterSink
	var g GaugeSink
	var r RateSink
	c.Add(3)
	g.Add(3)
	r.Add(3)
	c.Reset()
	g.Reset()
	r.Reset()
	assert.Zero(t, c)
	assert.Zero(t, g)
	assert.Zero(t, r)
}
