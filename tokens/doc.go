// Package tokens turns llm.Result values into tokenstorm's metrics: the metric
// catalogue as Go code, k6's four aggregations (CounterSink, GaugeSink, RateSink,
// TrendSink), SLO predicates and goodput. docs/metrics.md defines every metric
// against the fields of llm.Result and against the names vLLM bench, AIPerf, GuideLLM
// and llmperf use.
//
// # Worked example
//
// A worker records its results; after the workers are joined their recorders are
// merged and read like a k6 summary:
//
//	slo := tokens.SLO{TTFT: 500 * time.Millisecond, TPOT: 50 * time.Millisecond}
//	recs := make([]*tokens.Recorder, workers)
//	// worker i, on its own goroutine:
//	recs[i] = tokens.NewRecorder(slo)
//	for r := range results { // each *llm.Result the worker got
//		recs[i].Add(r)
//	}
//	// after every worker has returned:
//	total := tokens.NewRecorder(slo)
//	for _, rec := range recs {
//		total.Merge(rec)
//	}
//	p99, _ := total.Trend(tokens.MetricTTFT).Stat("p(99)") // ms
//	good := total.Goodput().Rate()                        // fraction meeting the SLO
//
// Code that has its own metric registry (the JS module) walks a result's values with
// Visit and its tags with Tags instead; neither allocates.
//
// # Percentiles
//
// A TrendSink keeps its first DefaultExactLimit samples verbatim and computes p(N) as
// k6 does: linear interpolation between the sorted samples at ranks ⌊i⌋ and ⌈i⌉,
// i = N/100·(n−1). Beyond the limit it folds them into a log-linear sketch of at most
// 2^15 buckets per sign (≤ 1 MiB, typically ~100 KiB): buckets are the top 10 mantissa
// bits and the exponent of the float64, so each percentile is within
// SketchRelativeError (2^-11 ≈ 0.049%) of the exact value, zero and negative values
// included. Count, Sum, Min, Max and Avg stay exact. The span is bounded to ~9.6
// decades below the largest magnitude (1 µs to an hour in milliseconds); smaller values
// are counted in the lowest kept bucket.
//
// The sketch is written here rather than taken from a library (DataDog's sketches-go
// is the obvious one) for three reasons: Merge must equal recording everything in one
// sink bit for bit, including sinks that are still exact merged into one that crosses
// the limit, which needs control of how buckets are keyed and collapsed; keying by
// float bits is integer arithmetic, identical on every platform, where a logarithmic
// mapping can differ in the last bit between math.Log implementations; and Add must
// not allocate or take a lock. It is about 200 lines (sketch.go).
//
// # Concurrency
//
// Nothing in this package is safe for concurrent use, by design: each worker owns its
// sinks (or Recorder), so the hot path takes no lock and does not allocate, and the
// owner merges them after joining the workers, as fortio does with its histograms.
// Catalogue, Lookup, Visit, Tags, TPOT and SLO methods are pure and may be called from
// any goroutine (Tags writes only the map it is given).
//
// The zero values of all four sinks are ready to use; NewTrendSink only exists to pass
// options.
package tokens
