package metrics

import (
	"reflect"
	"sync"
	"time"

	"github.com/tokenstorm/tokenstorm/tokens"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// Names the engine gives meaning to: checks samples build the group/check tree, and
// group_duration samples make their group appear in it even without checks.
const (
	ChecksMetric        = "checks"
	GroupDurationMetric = "group_duration"
	// CheckTag and GroupTag are the tags k6 puts on check samples: the check's name and
	// the group path ("" for the root group, "::a::b" for group b inside group a).
	CheckTag = "check"
	GroupTag = "group"
)

// aggregate is one metric's (or submetric's) sink; only the one for its type is used.
type aggregate struct {
	typ     xk6ext.MetricType
	counter tokens.CounterSink
	gauge   tokens.GaugeSink
	rate    tokens.RateSink
	trend   *tokens.TrendSink
}

func newAggregate(typ xk6ext.MetricType, trendOpts []tokens.TrendOption) aggregate {
	a := aggregate{typ: typ}
	if typ == xk6ext.Trend {
		a.trend = tokens.NewTrendSink(trendOpts...)
	}
	return a
}

func (a *aggregate) add(v float64, seq int64) {
	switch a.typ {
	case xk6ext.Counter:
		a.counter.Add(v)
	case xk6ext.Gauge:
		a.gauge.AddAt(v, seq)
	case xk6ext.Rate:
		a.rate.Add(v)
	case xk6ext.Trend:
		a.trend.Add(v)
	}
}

func (a *aggregate) empty() bool {
	switch a.typ {
	case xk6ext.Counter:
		return a.counter.Count() == 0
	case xk6ext.Gauge:
		return a.gauge.Count() == 0
	case xk6ext.Rate:
		return a.rate.Total() == 0
	case xk6ext.Trend:
		return a.trend.Count() == 0
	}
	return true
}

// clone deep-copies the aggregate; the sinks other than the trend are plain values. The
// copy's trend must share the original's options: a smaller exact limit would turn an
// exact copy into a sketch.
func (a *aggregate) clone(trendOpts []tokens.TrendOption) aggregate {
	c := *a
	if a.trend != nil {
		c.trend = tokens.NewTrendSink(trendOpts...)
		c.trend.Merge(a.trend)
	}
	return c
}

// stat reads a threshold's aggregation method. Percentile queries sort the trend's
// samples lazily, so callers hold the engine lock or own a clone.
func (a *aggregate) stat(th *threshold, elapsed time.Duration) float64 {
	switch th.kind {
	case statCount:
		return a.counter.Sum()
	case statCounterRate:
		return a.counter.Rate(elapsed)
	case statValue:
		return a.gauge.Value()
	case statRate:
		return a.rate.Rate()
	case statAvg:
		return a.trend.Avg()
	case statMin:
		return a.trend.Min()
	case statMax:
		return a.trend.Max()
	case statMed:
		return a.trend.Med()
	case statPercentile:
		return a.trend.Percentile(th.p)
	}
	return 0
}

// submetric aggregates the samples of its parent whose tags include all of its pairs.
type submetric struct {
	set *thresholdSet
	agg aggregate
}

func (s *submetric) matches(tags map[string]string) bool {
	for _, p := range s.set.tags {
		if v, ok := tags[p.key]; !ok || v != p.value {
			return false
		}
	}
	return true
}

// series is everything the engine keeps for one metric.
type series struct {
	metric   *xk6ext.Metric
	agg      aggregate
	direct   *thresholdSet // thresholds on the metric itself, or nil
	subs     []*submetric
	isChecks bool
	isGroup  bool

	// Samples of one request share one tag map, so within a batch the submetric match
	// of the previous sample is reused when the map is the same (by identity).
	memoBatch uint64
	memoTags  uintptr
	memoMask  uint64
}

// maxMemoSubs is how many submetrics a series may have for its match to be memoised
// (one bit each).
const maxMemoSubs = 64

// matchSubs returns which of s's submetrics tags selects, one bit per submetric.
func (s *series) matchSubs(tags map[string]string, batch uint64) uint64 {
	id := reflect.ValueOf(tags).Pointer() // no allocation: a map is pointer-shaped
	if id != 0 && s.memoBatch == batch && s.memoTags == id {
		return s.memoMask
	}
	var mask uint64
	for i, sub := range s.subs {
		if sub.matches(tags) {
			mask |= 1 << i
		}
	}
	s.memoBatch, s.memoTags, s.memoMask = batch, id, mask
	return mask
}

type checkKey struct{ group, name string }

// engineState is the Engine's body, kept unexported so the API file shows only the API.
type engineState struct {
	clock     Clock
	reg       *Registry
	sets      []*thresholdSet
	trendOpts []tokens.TrendOption

	mu      sync.Mutex
	series  map[*xk6ext.Metric]*series
	order   []*series // first-seen order, for stable output
	seq     int64     // gauge stamps: ingest order decides the "last" value
	batch   uint64    // Ingest calls, for the per-batch submetric memo
	checks  map[checkKey]*Check
	corder  []checkKey
	groups  map[string]struct{} // group paths seen
	gorder  []string
	start   time.Time
	end     time.Time
	started bool
	ended   bool
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func newEngine(reg *Registry, th Thresholds, opts ...Option) *Engine {
	if reg == nil {
		reg = NewRegistry()
	}
	e := &Engine{engineState{
		clock:  systemClock{},
		reg:    reg,
		sets:   th.sets,
		series: make(map[*xk6ext.Metric]*series),
		checks: make(map[checkKey]*Check),
		groups: make(map[string]struct{}),
	}}
	for _, o := range opts {
		o(e)
	}
	// Series of metrics with thresholds exist from the start, so they show in the
	// summary (evaluated on empty values) even when no sample ever arrives, as in k6.
	for _, set := range th.sets {
		s := e.seriesFor(set.metric)
		if set.selector == "" {
			s.direct = set
			continue
		}
		s.subs = append(s.subs, &submetric{set: set, agg: newAggregate(set.metric.Type, e.trendOpts)})
	}
	return e
}

// seriesFor returns m's series, creating it. Caller holds mu (or is the constructor).
func (e *engineState) seriesFor(m *xk6ext.Metric) *series {
	if s, ok := e.series[m]; ok {
		return s
	}
	s := &series{
		metric:   m,
		agg:      newAggregate(m.Type, e.trendOpts),
		isChecks: m.Name == ChecksMetric && m.Type == xk6ext.Rate,
		isGroup:  m.Name == GroupDurationMetric,
	}
	e.series[m] = s
	e.order = append(e.order, s)
	return s
}

func (e *engineState) ingest(samples []xk6ext.Sample) {
	if len(samples) == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.batch++ // a caller may refill a tag map between batches, never within one
	for i := range samples {
		smp := &samples[i]
		// NaN and ±Inf would poison sums and comparisons for the rest of the run; the
		// trend sink already ignores them, so every kind does.
		if smp.Metric == nil || smp.Value-smp.Value != 0 {
			continue
		}
		s := e.series[smp.Metric]
		if s == nil {
			s = e.seriesFor(smp.Metric)
		}
		e.seq++
		s.agg.add(smp.Value, e.seq)
		switch n := len(s.subs); {
		case n == 0:
		case n <= maxMemoSubs:
			mask := s.matchSubs(smp.Tags, e.batch)
			for j := 0; mask != 0; j, mask = j+1, mask>>1 {
				if mask&1 != 0 {
					s.subs[j].agg.add(smp.Value, e.seq)
				}
			}
		default:
			for _, sub := range s.subs {
				if sub.matches(smp.Tags) {
					sub.agg.add(smp.Value, e.seq)
				}
			}
		}
		switch {
		case s.isChecks:
			e.tallyCheck(smp)
		case s.isGroup:
			e.noteGroup(smp.Tags[GroupTag])
		}
	}
}

func (e *engineState) tallyCheck(smp *xk6ext.Sample) {
	k := checkKey{group: smp.Tags[GroupTag], name: smp.Tags[CheckTag]}
	c := e.checks[k]
	if c == nil {
		e.noteGroup(k.group)
		path := k.group + "::" + k.name
		c = &Check{Name: k.name, Path: path, ID: pathID(path)}
		e.checks[k] = c
		e.corder = append(e.corder, k)
	}
	if smp.Value != 0 {
		c.Passes++
	} else {
		c.Fails++
	}
}

func (e *engineState) noteGroup(path string) {
	if _, ok := e.groups[path]; ok {
		return
	}
	e.groups[path] = struct{}{}
	e.gorder = append(e.gorder, path)
}

func (e *engineState) setStart(t time.Time) {
	e.mu.Lock()
	e.start, e.started = t, true
	e.mu.Unlock()
}

func (e *engineState) setEnd(t time.Time) {
	e.mu.Lock()
	e.end, e.ended = t, true
	e.mu.Unlock()
}

func (e *engineState) elapsed() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.elapsedLocked()
}

func (e *engineState) elapsedLocked() time.Duration {
	if !e.started {
		return 0
	}
	end := e.end
	if !e.ended {
		end = e.clock.Now()
	}
	if d := end.Sub(e.start); d > 0 {
		return d
	}
	return 0
}

func (e *engineState) evaluate(final bool) ([]ThresholdResult, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	elapsed := e.elapsedLocked()
	var out []ThresholdResult
	abort := false
	for _, set := range e.sets {
		agg := e.aggregateOf(set)
		if !final && agg.empty() {
			continue // k6 skips thresholds of still-empty metrics during the run
		}
		for _, th := range set.items {
			r := evalOne(set, th, agg, elapsed)
			if !r.OK && th.abortOnFail && elapsed >= th.delay {
				abort = true
			}
			out = append(out, r)
		}
	}
	return out, abort
}

func evalOne(set *thresholdSet, th *threshold, agg *aggregate, elapsed time.Duration) ThresholdResult {
	v := agg.stat(th, elapsed)
	return ThresholdResult{
		Metric:      set.name,
		Expr:        th.source,
		OK:          th.op.compare(v, th.value),
		Observed:    v,
		Stat:        th.stat,
		AbortOnFail: th.abortOnFail,
	}
}

// aggregateOf finds the aggregate a threshold set reads. Caller holds mu.
func (e *engineState) aggregateOf(set *thresholdSet) *aggregate {
	s := e.series[set.metric]
	if set.selector == "" {
		return &s.agg
	}
	for _, sub := range s.subs {
		if sub.set == set {
			return &sub.agg
		}
	}
	return nil // unreachable: newEngine creates every set's submetric
}

func (e *engineState) counterSum(name string) float64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	var s *series
	if m := e.reg.Get(name); m != nil {
		s = e.series[m]
	} else {
		for _, o := range e.order { // a metric fed without being registered
			if o.metric.Name == name {
				s = o
				break
			}
		}
	}
	if s == nil || s.metric.Type != xk6ext.Counter {
		return 0
	}
	return s.agg.counter.Sum()
}
