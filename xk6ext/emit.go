package xk6ext

import (
	"fmt"
	"time"

	"github.com/tokenstorm/tokenstorm/llm"
	"github.com/tokenstorm/tokenstorm/tokens"
)

// Names of k6's built-in data metrics, which the module feeds from each request's byte
// counts because its requests do not go through a k6 HTTP module.
const (
	MetricDataSent     = "data_sent"
	MetricDataReceived = "data_received"
)

// Declarer declares a metric; Host.NewMetric and the runner's registry are Declarers.
type Declarer func(name string, typ MetricType, vt ValueType) (*Metric, error)

// Recorder turns request results into the module's samples: the tokens catalogue plus
// data_sent and data_received. The JS module uses one per VU; Go scenarios (package
// gotest) use it too, so a script and a Go scenario emit the same names and tags.
type Recorder struct {
	byName       map[string]*Metric
	dataSent     *Metric
	dataReceived *Metric
}

// NewRecorder declares the tokens catalogue and the data metrics. Declaring is
// idempotent, so every VU declaring the same set is fine.
func NewRecorder(declare Declarer) (*Recorder, error) {
	cat := tokens.Catalogue()
	rec := &Recorder{byName: make(map[string]*Metric, len(cat))}
	for _, d := range cat {
		vt := Default
		if d.Time {
			vt = Time
		}
		met, err := declare(d.Name, metricType(d.Kind), vt)
		if err != nil {
			return nil, fmt.Errorf("tokenstorm: declaring metric %s: %w", d.Name, err)
		}
		rec.byName[d.Name] = met
	}
	var err error
	if rec.dataSent, err = declare(MetricDataSent, Counter, Data); err != nil {
		return nil, fmt.Errorf("tokenstorm: declaring metric %s: %w", MetricDataSent, err)
	}
	if rec.dataReceived, err = declare(MetricDataReceived, Counter, Data); err != nil {
		return nil, fmt.Errorf("tokenstorm: declaring metric %s: %w", MetricDataReceived, err)
	}
	return rec, nil
}

func metricType(k tokens.Kind) MetricType {
	switch k {
	case tokens.KindCounter:
		return Counter
	case tokens.KindGauge:
		return Gauge
	case tokens.KindRate:
		return Rate
	}
	return Trend
}

// Samples turns one result into its samples: every value tokens.Visit yields plus the
// byte counters, all sharing one tag map (the result's tags, then the client's, then
// the call's, later ones winning). One slice and one map per request; nothing per chunk
// beyond the slice's room for the ITL gaps. The host merges its VU tags under them.
func (rec *Recorder) Samples(r *llm.Result, slo tokens.SLO, clientTags, callTags map[string]string) []Sample {
	tags := make(map[string]string, 5+len(clientTags)+len(callTags))
	tokens.Tags(r, tags)
	for k, v := range clientTags {
		tags[k] = v
	}
	for k, v := range callTags {
		tags[k] = v
	}
	now := time.Now()
	out := make([]Sample, 0, len(rec.byName)+2+len(r.ITL))
	tokens.Visit(r, slo, func(name string, v float64) {
		if met := rec.byName[name]; met != nil {
			out = append(out, Sample{Metric: met, Time: now, Value: v, Tags: tags})
		}
	})
	out = append(out,
		Sample{Metric: rec.dataSent, Time: now, Value: float64(r.BytesSent), Tags: tags},
		Sample{Metric: rec.dataReceived, Time: now, Value: float64(r.BytesReceived), Tags: tags})
	return out
}
