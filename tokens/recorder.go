package tokens

import "github.com/tokenstorm/tokenstorm/llm"

// Recorder aggregates results into one sink per catalogue metric, untagged: the summary
// of a run for Go users, the gotest package and tools that do not go through JS.
//
// Not safe for concurrent use: give each worker its own Recorder (same SLO and options)
// and Merge them after the workers have been joined; the merged Recorder equals one that
// recorded every result itself (see TrendSink.Merge).
type Recorder struct {
	slo      SLO
	counters [numMetrics]*CounterSink
	rates    [numMetrics]*RateSink
	trends   [numMetrics]*TrendSink
}

// NewRecorder returns a Recorder judging goodput against slo; opts configure every
// trend (for example WithExactLimit).
func NewRecorder(slo SLO, opts ...TrendOption) *Recorder {
	rec := &Recorder{slo: slo}
	for id, d := range catalogue {
		switch d.Kind {
		case KindCounter:
			rec.counters[id] = &CounterSink{}
		case KindRate:
			rec.rates[id] = &RateSink{}
		case KindTrend:
			rec.trends[id] = NewTrendSink(opts...)
		}
	}
	return rec
}

// SLO returns the limits goodput is judged against.
func (rec *Recorder) SLO() SLO { return rec.slo }

// Add records every metric value r yields (see Visit).
func (rec *Recorder) Add(r *llm.Result) {
	visit(r, rec.slo, func(id metricID, v float64) {
		switch catalogue[id].Kind {
		case KindCounter:
			rec.counters[id].Add(v)
		case KindRate:
			rec.rates[id].Add(v)
		case KindTrend:
			rec.trends[id].Add(v)
		}
	})
}

// Merge adds everything o recorded (nothing when o is nil). Both should have the same
// SLO and options.
func (rec *Recorder) Merge(o *Recorder) {
	if o == nil {
		return
	}
	for id := range numMetrics {
		switch catalogue[id].Kind {
		case KindCounter:
			rec.counters[id].Merge(o.counters[id])
		case KindRate:
			rec.rates[id].Merge(o.rates[id])
		case KindTrend:
			rec.trends[id].Merge(o.trends[id])
		}
	}
}

// Trend returns the sink of the trend called name, nil if there is no such trend.
func (rec *Recorder) Trend(name string) *TrendSink {
	if id, ok := lookupID(name); ok {
		return rec.trends[id]
	}
	return nil
}

// Rate returns the sink of the rate called name, nil if there is no such rate.
func (rec *Recorder) Rate(name string) *RateSink {
	if id, ok := lookupID(name); ok {
		return rec.rates[id]
	}
	return nil
}

// Counter returns the sink of the counter called name, nil if there is no such counter.
func (rec *Recorder) Counter(name string) *CounterSink {
	if id, ok := lookupID(name); ok {
		return rec.counters[id]
	}
	return nil
}

// Goodput is the llm_goodput rate; empty unless the SLO is set.
func (rec *Recorder) Goodput() *RateSink { return rec.rates[idGoodput] }
