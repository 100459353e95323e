package xk6ext_test

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/xk6ext"
)

func samples(t *testing.T, vuID int64, ctor string, n int) []float64 {
	t.Helper()
	e := newEnv(t)
	prog := e.compile(t, `
import storm from 'k6/x/tokenstorm';
const s = `+ctor+`;
export function run(n) { const out = []; for (let i = 0; i < n; i++) out.push(s.sample()); return out; }
`)
	vu, err := prog.NewVU(testCtx(t), vuID)
	require.NoError(t, err)
	raw := call(t, vu, "run", n).([]any)
	out := make([]float64, len(raw))
	for i, v := range raw {
		x, ok := v.(int64)
		require.True(t, ok, "sample() returns integers, got %T", v)
		out[i] = float64(x)
	}
	return out
}

func TestLognormal(t *testing.T) {
	cases := []struct {
		name            string
		median, lo, hi  float64
		ctor            string
		wantMedianDelta float64
	}{
		{"median 200", 200, 1, 0, "storm.lognormal({ median: 200, sigma: 0.8, seed: 1 })", 0.03},
		{"clamped", 300, 16, 400, "storm.lognormal({ median: 300, sigma: 1.5, min: 16, max: 400, seed: 2 })", 0.04},
		{"sigma 0 is constant", 50, 50, 50, "storm.lognormal({ median: 50, sigma: 0 })", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := samples(t, 1, c.ctor, 20001)
			sort.Float64s(s)
			assert.InEpsilon(t, c.median, s[len(s)/2], c.wantMedianDelta+1e-9, "median")
			assert.GreaterOrEqual(t, s[0], c.lo)
			if c.hi > 0 {
				assert.LessOrEqual(t, s[len(s)-1], c.hi)
				assert.Less(t, s[len(s)*9/10], c.hi+1, "not everything clamped")
			}
		})
	}
}

func TestLognormalSeededPerVU(t *testing.T) {
	const ctor = "storm.lognormal({ median: 100, seed: 42 })"
	a, b := samples(t, 1, ctor, 50), samples(t, 1, ctor, 50)
	assert.Equal(t, a, b, "same seed, same VU: same sequence")
	assert.NotEqual(t, a, samples(t, 2, ctor, 50), "other VU: other sequence")
}

func TestUniformAndConstant(t *testing.T) {
	u := samples(t, 1, "storm.uniform({ min: 3, max: 7, seed: 1 })", 5000)
	seen := map[float64]int{}
	for _, v := range u {
		seen[v]++
	}
	assert.Len(t, seen, 5, "every value of [3, 7] drawn, nothing else: %v", seen)
	for v, n := range seen {
		assert.GreaterOrEqual(t, v, 3.0)
		assert.LessOrEqual(t, v, 7.0)
		assert.InDelta(t, 1000, n, 150, "value %v", v)
	}
	for _, v := range samples(t, 1, "storm.constant(12)", 10) {
		assert.Equal(t, 12.0, v)
	}
}

func TestSamplerConstructors(t *testing.T) {
	_, err := xk6ext.NewLognormal(0, 1, 0, 0, 1)
	assert.Error(t, err)
	_, err = xk6ext.NewLognormal(10, -1, 0, 0, 1)
	assert.Error(t, err)
	_, err = xk6ext.NewUniform(5, 4, 1)
	assert.Error(t, err)
	u, err := xk6ext.NewUniform(4, 4, 1)
	require.NoError(t, err)
	assert.Equal(t, int64(4), u.Sample())
	assert.Equal(t, int64(3), xk6ext.Constant{N: 3}.Sample())
}
