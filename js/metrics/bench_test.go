package metrics

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tokenstorm/tokenstorm/tokens"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// benchBatch is what one finished request emits: a few trends, counters and a rate,
// with the tag set every llm_* sample carries.
func benchBatch(b *testing.B, reg *Registry) []xk6ext.Sample {
	b.Helper()
	decl := func(name string, typ xk6ext.MetricType, vt xk6ext.ValueType) *xk6ext.Metric {
		m, err := reg.NewMetric(name, typ, vt)
		if err != nil {
			b.Fatal(err)
		}
		return m
	}
	tags := map[string]string{"model": "m1", "dialect": "openai", "status": "200",
		"finish_reason": "stop", "scenario": "default", "group": ""}
	itl := decl("llm_itl", xk6ext.Trend, xk6ext.Time)
	batch := []xk6ext.Sample{
		{Metric: decl("llm_ttft", xk6ext.Trend, xk6ext.Time), Value: 12.5, Tags: tags},
		{Metric: decl("llm_e2e", xk6ext.Trend, xk6ext.Time), Value: 812, Tags: tags},
		{Metric: decl("llm_reqs", xk6ext.Counter, xk6ext.Default), Value: 1, Tags: tags},
		{Metric: decl("llm_req_failed", xk6ext.Rate, xk6ext.Default), Value: 0, Tags: tags},
		{Metric: decl("llm_completion_tokens", xk6ext.Counter, xk6ext.Default), Value: 128, Tags: tags},
	}
	for i := range 11 { // chunk gaps dominate the sample count in real runs
		batch = append(batch, xk6ext.Sample{Metric: itl, Value: 6 + float64(i)/10, Tags: tags})
	}
	return batch
}

// BenchmarkIngest measures the engine per sample, with and without submetrics, against
// a naive engine that keys its series by name plus serialised tags, in the same run.
func BenchmarkIngest(b *testing.B) {
	b.Run("engine", func(b *testing.B) {
		reg := NewRegistry()
		batch := benchBatch(b, reg)
		e := NewEngine(reg, Thresholds{})
		benchIngest(b, batch, e.Ingest)
	})
	b.Run("engine-submetrics", func(b *testing.B) {
		reg := NewRegistry()
		batch := benchBatch(b, reg)
		th := mustThresholds(b, reg, `{
			"llm_itl{model:m1}": ["p(95)<100"], "llm_itl{model:m2}": ["p(95)<100"],
			"llm_itl{status:200,model:m1}": ["p(99)<100"], "llm_ttft{model:m1}": ["p(95)<100"]}`)
		e := NewEngine(reg, th)
		benchIngest(b, batch, e.Ingest)
	})
	b.Run("naive-map", func(b *testing.B) {
		reg := NewRegistry()
		batch := benchBatch(b, reg)
		n := &naiveEngine{series: map[string]*tokens.TrendSink{}}
		benchIngest(b, batch, n.ingest)
	})
}

func benchIngest(b *testing.B, batch []xk6ext.Sample, ingest func([]xk6ext.Sample)) {
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		ingest(batch)
		n += len(batch)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/sample")
}

// naiveEngine is the obvious alternative: one series per metric name and tag set,
// found by building a string key for every sample.
type naiveEngine struct {
	mu     sync.Mutex
	series map[string]*tokens.TrendSink
}

func (n *naiveEngine) ingest(samples []xk6ext.Sample) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, s := range samples {
		keys := make([]string, 0, len(s.Tags))
		for k := range s.Tags {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var sb strings.Builder
		sb.WriteString(s.Metric.Name)
		for _, k := range keys {
			sb.WriteString("," + k + "=" + s.Tags[k])
		}
		sink := n.series[sb.String()]
		if sink == nil {
			sink = tokens.NewTrendSink()
			n.series[sb.String()] = sink
		}
		sink.Add(s.Value)
	}
}

// BenchmarkSnapshot is the cost of one summary copy with trends in both sink modes.
func BenchmarkSnapshot(b *testing.B) {
	reg := NewRegistry()
	batch := benchBatch(b, reg)
	e := NewEngine(reg, Thresholds{})
	for range 20_000 { // llm_itl passes the exact limit, llm_ttft stays exact
		e.Ingest(batch)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = e.Snapshot()
	}
}
