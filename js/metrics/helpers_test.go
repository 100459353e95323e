package metrics

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// fakeClock is a Clock the test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// testRegistry declares one metric of every kind plus k6's checks.
func testRegistry(t testing.TB) (*Registry, map[string]*xk6ext.Metric) {
	t.Helper()
	reg := NewRegistry()
	ms := map[string]*xk6ext.Metric{}
	for _, d := range []struct {
		name string
		typ  xk6ext.MetricType
		vt   xk6ext.ValueType
	}{
		{"reqs", xk6ext.Counter, xk6ext.Default},
		{"data_received", xk6ext.Counter, xk6ext.Data},
		{"vus", xk6ext.Gauge, xk6ext.Default},
		{"failed", xk6ext.Rate, xk6ext.Default},
		{"checks", xk6ext.Rate, xk6ext.Default},
		{"ttft", xk6ext.Trend, xk6ext.Time},
		{"tps", xk6ext.Trend, xk6ext.Default},
		{"group_duration", xk6ext.Trend, xk6ext.Time},
	} {
		m, err := reg.NewMetric(d.name, d.typ, d.vt)
		require.NoError(t, err)
		ms[d.name] = m
	}
	return reg, ms
}

// mustThresholds parses a JSON object of thresholds.
func mustThresholds(t testing.TB, reg *Registry, js string) Thresholds {
	t.Helper()
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(js), &raw))
	th, err := ParseThresholds(raw, reg)
	require.NoError(t, err)
	return th
}

func sample(m *xk6ext.Metric, v float64, kv ...string) xk6ext.Sample {
	tags := make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		tags[kv[i]] = kv[i+1]
	}
	return xk6ext.Sample{Metric: m, Value: v, Tags: tags}
}
