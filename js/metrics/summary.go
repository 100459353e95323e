package metrics

import (
	"crypto/md5"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tokenstorm/tokenstorm/tokens"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// TrendView is a read-only copy of a trend's aggregate, safe for concurrent use.
type TrendView struct {
	mu   sync.Mutex // percentile queries sort the copy lazily
	sink *tokens.TrendSink
}

// Count is the number of samples.
func (v *TrendView) Count() int64 { return v.sink.Count() }

// Avg is the mean, 0 when empty.
func (v *TrendView) Avg() float64 { return v.sink.Avg() }

// Min is the smallest sample, 0 when empty.
func (v *TrendView) Min() float64 { return v.sink.Min() }

// Max is the largest sample, 0 when empty.
func (v *TrendView) Max() float64 { return v.sink.Max() }

// Med is p(50).
func (v *TrendView) Med() float64 { return v.P(50) }

// P is k6's p(N) for N in [0, 100].
func (v *TrendView) P(p float64) float64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.sink.Percentile(p)
}

// Exact reports whether percentiles are exact (k6's linear interpolation over every
// sample) rather than read from the bounded-memory sketch.
func (v *TrendView) Exact() bool { return v.sink.Exact() }

// Stat returns a k6 trend statistic by name: count, sum, avg, min, med, max or p(N).
func (v *TrendView) Stat(name string) (float64, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.sink.Stat(name)
}

// ValidateTrendStats checks summaryTrendStats names (avg, min, med, max, count, p(N)),
// so that a runner can refuse a bad --summary-trend-stats as invalid options.
func ValidateTrendStats(stats []string) error {
	var probe tokens.TrendSink
	for _, s := range stats {
		if s == "sum" { // Stat knows it, k6's summaryTrendStats does not
			return &StatError{Stat: s}
		}
		if _, ok := probe.Stat(s); !ok {
			return &StatError{Stat: s}
		}
	}
	return nil
}

// pathID is the group or check id k6 reports: the hex MD5 of its path.
func pathID(path string) string {
	sum := md5.Sum([]byte(path))
	return hex.EncodeToString(sum[:])
}

// snapshotItem is one series or submetric copied out of the engine.
type snapshotItem struct {
	name string
	set  *thresholdSet
	agg  aggregate
	ms   *MetricSummary
}

func (e *engineState) snapshot() *Summary {
	e.mu.Lock()
	elapsed := e.elapsedLocked()
	var items []snapshotItem
	for _, s := range e.order {
		if s.agg.empty() && s.direct == nil && len(s.subs) == 0 {
			continue
		}
		items = append(items, snapshotItem{name: s.metric.Name, set: s.direct, agg: s.agg.clone(e.trendOpts),
			ms: &MetricSummary{Name: s.metric.Name, Type: s.metric.Type, Contains: s.metric.ValueType}})
		for _, sub := range s.subs {
			items = append(items, snapshotItem{name: sub.set.name, set: sub.set, agg: sub.agg.clone(e.trendOpts),
				ms: &MetricSummary{Name: sub.set.name, Type: s.metric.Type, Contains: s.metric.ValueType,
					Submetric: true, Parent: s.metric.Name, Tags: sub.set.selector}})
		}
	}
	checks := make([]Check, len(e.corder))
	for i, k := range e.corder {
		checks[i] = *e.checks[k]
	}
	groups := slices.Clone(e.gorder)
	e.mu.Unlock()

	sum := &Summary{Metrics: make(map[string]*MetricSummary, len(items)), Duration: elapsed}
	for i := range items {
		it := &items[i]
		it.ms.Values = values(&it.agg, elapsed)
		if it.agg.trend != nil {
			it.ms.trend = &TrendView{sink: it.agg.trend}
		}
		if it.set != nil {
			it.ms.Thresholds = make(map[string]bool, len(it.set.items))
			for _, th := range it.set.items {
				r := evalOne(it.set, th, &it.agg, elapsed)
				if ok, seen := it.ms.Thresholds[r.Expr]; !seen || ok {
					it.ms.Thresholds[r.Expr] = r.OK
				}
				sum.Thresholds = append(sum.Thresholds, r)
			}
		}
		sum.Metrics[it.name] = it.ms
	}
	// One block per metric in the text summary, metrics in name order as k6 prints them.
	slices.SortStableFunc(sum.Thresholds, func(a, b ThresholdResult) int { return strings.Compare(a.Metric, b.Metric) })
	sum.RootGroup = buildGroups(groups, checks)
	return sum
}

// values computes k6's summary values of an aggregate.
func values(a *aggregate, elapsed time.Duration) map[string]float64 {
	switch a.typ {
	case xk6ext.Counter:
		return map[string]float64{"count": a.counter.Sum(), "rate": a.counter.Rate(elapsed)}
	case xk6ext.Gauge:
		return map[string]float64{"value": a.gauge.Value(), "min": a.gauge.Min(), "max": a.gauge.Max()}
	case xk6ext.Rate:
		return map[string]float64{"rate": a.rate.Rate(), "passes": float64(a.rate.Trues()),
			"fails": float64(a.rate.Total() - a.rate.Trues())}
	case xk6ext.Trend:
		v := make(map[string]float64, len(DefaultTrendStats)+1)
		for _, st := range DefaultTrendStats {
			v[st], _ = a.trend.Stat(st)
		}
		v["count"] = float64(a.trend.Count())
		return v
	}
	return nil
}

// buildGroups turns group paths and checks into k6's group tree, in first-seen order.
func buildGroups(paths []string, checks []Check) *Group {
	root := &Group{ID: pathID("")}
	byPath := map[string]*Group{"": root}
	var ensure func(path string) *Group
	ensure = func(path string) *Group {
		if g, ok := byPath[path]; ok {
			return g
		}
		cut := strings.LastIndex(path, "::")
		parentPath, name := "", path
		if cut >= 0 {
			parentPath, name = path[:cut], path[cut+2:]
		}
		parent := ensure(parentPath)
		g := &Group{Name: name, Path: path, ID: pathID(path)}
		parent.Groups = append(parent.Groups, g)
		byPath[path] = g
		return g
	}
	for _, p := range paths {
		ensure(p)
	}
	for i := range checks {
		c := checks[i]
		g := ensure(strings.TrimSuffix(c.Path, "::"+c.Name))
		g.Checks = append(g.Checks, &c)
	}
	return root
}

// Metric returns the named metric or submetric summary, or nil.
func (s *Summary) Metric(name string) *MetricSummary { return s.Metrics[name] }

// Trend returns the named trend's (or trend submetric's) aggregate, or nil.
func (s *Summary) Trend(name string) *TrendView {
	if m := s.Metrics[name]; m != nil {
		return m.trend
	}
	return nil
}

// Rate returns the named rate metric's share of non-zero samples (0 if absent).
func (s *Summary) Rate(name string) float64 { return s.value(name, xk6ext.Rate, "rate") }

// Counter returns the named counter's sum (0 if absent).
func (s *Summary) Counter(name string) float64 { return s.value(name, xk6ext.Counter, "count") }

// Gauge returns the named gauge's last value (0 if absent).
func (s *Summary) Gauge(name string) float64 { return s.value(name, xk6ext.Gauge, "value") }

func (s *Summary) value(name string, typ xk6ext.MetricType, key string) float64 {
	if m := s.Metrics[name]; m != nil && m.Type == typ {
		return m.Values[key]
	}
	return 0
}

// Check returns the passes and fails of the checks called name, summed over all groups;
// a name starting with "::" is matched against check paths instead ("::group::check").
func (s *Summary) Check(name string) (passes, fails int64) {
	byPath := strings.HasPrefix(name, "::")
	var walk func(g *Group)
	walk = func(g *Group) {
		for _, c := range g.Checks {
			if (byPath && c.Path == name) || (!byPath && c.Name == name) {
				passes += c.Passes
				fails += c.Fails
			}
		}
		for _, sub := range g.Groups {
			walk(sub)
		}
	}
	if s.RootGroup != nil {
		walk(s.RootGroup)
	}
	return passes, fails
}

// Failed reports whether any threshold failed.
func (s *Summary) Failed() bool {
	for _, r := range s.Thresholds {
		if !r.OK {
			return true
		}
	}
	return false
}

// names returns metric names sorted as k6 prints them: by name, each submetric right
// after its parent.
func (s *Summary) names() []string {
	names := make([]string, 0, len(s.Metrics))
	for n := range s.Metrics {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		ma, mb := s.Metrics[a], s.Metrics[b]
		pa, pb := a, b
		if ma.Submetric {
			pa = ma.Parent
		}
		if mb.Submetric {
			pb = mb.Parent
		}
		if c := strings.Compare(pa, pb); c != 0 {
			return c
		}
		if ma.Submetric != mb.Submetric {
			if ma.Submetric {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	})
	return names
}

func trendStats(opts SummaryOptions) []string {
	if len(opts.TrendStats) == 0 {
		return DefaultTrendStats
	}
	return opts.TrendStats
}

// statValues are the values k6 reports for a metric under opts: trends per
// summaryTrendStats, others their fixed set.
func (m *MetricSummary) statValues(opts SummaryOptions) (keys []string, vals map[string]float64) {
	switch m.Type {
	case xk6ext.Counter:
		return []string{"count", "rate"}, m.Values
	case xk6ext.Gauge:
		return []string{"value", "min", "max"}, m.Values
	case xk6ext.Rate:
		return []string{"rate", "passes", "fails"}, m.Values
	}
	stats := trendStats(opts)
	vals = make(map[string]float64, len(stats))
	for _, st := range stats {
		if m.trend == nil {
			if v, ok := m.Values[st]; ok {
				vals[st] = v
				keys = append(keys, st)
			}
			continue
		}
		if v, ok := m.trend.Stat(st); ok && st != "sum" {
			vals[st] = v
			keys = append(keys, st)
		}
	}
	return keys, vals
}

func (s *Summary) handleSummaryData(opts SummaryOptions) map[string]any {
	metrics := make(map[string]any, len(s.Metrics))
	for name, m := range s.Metrics {
		_, vals := m.statValues(opts)
		values := make(map[string]any, len(vals))
		for k, v := range vals {
			values[k] = v
		}
		md := map[string]any{
			"type":     m.Type.String(),
			"contains": m.Contains.String(),
			"values":   values,
		}
		if m.Thresholds != nil {
			ths := make(map[string]any, len(m.Thresholds))
			for expr, ok := range m.Thresholds {
				ths[expr] = map[string]any{"ok": ok}
			}
			md["thresholds"] = ths
		}
		metrics[name] = md
	}
	stats := make([]any, 0, len(trendStats(opts)))
	for _, st := range trendStats(opts) {
		stats = append(stats, st)
	}
	root := s.RootGroup
	if root == nil {
		root = buildGroups(nil, nil)
	}
	return map[string]any{
		"metrics":    metrics,
		"root_group": groupData(root),
		"options": map[string]any{
			"summaryTrendStats": stats,
			"summaryTimeUnit":   opts.TimeUnit,
			"noColor":           opts.NoColor,
		},
		"state": map[string]any{
			"isStdOutTTY":       opts.StdoutTTY,
			"isStdErrTTY":       opts.StderrTTY,
			"testRunDurationMs": float64(s.Duration) / float64(time.Millisecond),
		},
	}
}

func groupData(g *Group) map[string]any {
	groups := make([]any, 0, len(g.Groups))
	for _, sub := range g.Groups {
		groups = append(groups, groupData(sub))
	}
	checks := make([]any, 0, len(g.Checks))
	for _, c := range g.Checks {
		checks = append(checks, map[string]any{
			"name": c.Name, "path": c.Path, "id": c.ID, "passes": c.Passes, "fails": c.Fails,
		})
	}
	return map[string]any{"name": g.Name, "path": g.Path, "id": g.ID, "groups": groups, "checks": checks}
}

// StatError reports a summaryTrendStats name k6 does not know.
type StatError struct{ Stat string }

func (e *StatError) Error() string {
	return "invalid summary trend stat " + strconv.Quote(e.Stat) + " (use avg, min, med, max, count or p(N) with 0 ≤ N ≤ 100)"
}
