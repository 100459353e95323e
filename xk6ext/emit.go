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

// metricSet holds one VU's declared metrics.
type metricSet struct {
	byName       map[string]*Metric
	dataSent     *Metric
	dataReceived *Metric
}

// declareMetrics declares the tokens catalogue and the data metrics. NewMetric is
// idempotent, so every VU declaring the same set is fine.
func declareMetrics(h Host) (*metricSet, error) {
	cat := tokens.Catalogue()
	ms := &metricSet{byName: make(map[string]*Metric, len(cat))}
	for _, d := range cat {
		vt := Default
		if d.Time {
			vt = Time
		}
		met, err := h.NewMetric(d.Name, metricType(d.Kind), vt)
		if err != nil {
			return nil, fmt.Errorf("tokenstorm: declaring metric %s: %w", d.Name, err)
		}
		ms.byName[d.Name] = met
	}
	var err error
	if ms.dataSent, err = h.NewMetric(MetricDataSent, Counter, Data); err != nil {
		return nil, fmt.Errorf("tokenstorm: declaring metric %s: %w", MetricDataSent, err)
	}
	if ms.dataReceived, err = h.NewMetric(MetricDataReceived, Counter, Data); err != nil {
		return nil, fmt.Errorf("tokenstorm: declaring metric %s: %w", MetricDataReceived, err)
	}
	return ms, nil
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

// samples turns one result into its samples: every value tokens.Visit yields plus the
// byte counters, all sharing one tag map (the result's tags, then the client's, then
// the call's, later ones winning). One slice and one map per request; nothing per chunk
// beyond the slice's room for the ITL gaps.
func (ms *metricSet) samples(r *llm.Result, slo tokens.SLO, clientTags, callTags map[string]string) []Sample {
	tags := make(map[string]string, 5+len(clientTags)+len(callTags))
	tokens.Tags(r, tags)
	for k, v := range clientTags {
		tags[k] = v
	}
	for k, v := range callTags {
		tags[k] = v
	}
	now := time.Now()
	out := make([]Sample, 0, len(ms.byName)+2+len(r.ITL))
	tokens.Visit(r, slo, func(name string, v float64) {
		if met := ms.byName[name]; met != nil {
			out = append(out, Sample{Metric: met, Time: now, Value: v, Tags: tags})
		}
	})
	out = append(out,
		Sample{Metric: ms.dataSent, Time: now, Value: float64(r.BytesSent), Tags: tags},
		Sample{Metric: ms.dataReceived, Time: now, Value: float64(r.BytesReceived), Tags: tags})
	return out
}
