// Package metrics is the metrics engine of tokenstorm's runner for k6-style scripts: a
// Registry of declared metrics, an Engine that aggregates samples into sinks, k6
// thresholds (with submetrics, abortOnFail and delayAbortEval), and the three
// end-of-test outputs: the text summary, the --summary-export document and the data
// object handed to handleSummary. It follows k6's documented semantics; no k6 code is
// used. The engine needs no JavaScript: Go-native scenarios feed it directly.
//
// # Worked example
//
//	reg := metrics.NewRegistry()
//	ttft, _ := reg.NewMetric("llm_ttft", xk6ext.Trend, xk6ext.Time)
//	th, err := metrics.ParseThresholds(map[string]json.RawMessage{
//		"llm_ttft{model:small}": json.RawMessage(`["p(95)<200"]`),
//	}, reg) // a *ThresholdError names the metric and the expression
//	e := metrics.NewEngine(reg, th)
//	e.SetStart(time.Now())
//	e.Ingest([]xk6ext.Sample{{Metric: ttft, Value: 120, Tags: map[string]string{"model": "small"}}})
//	results, abort := e.EvaluateThresholds(false) // every ~2 s while running
//	e.SetEnd(time.Now())
//	sum := e.Snapshot()
//	fmt.Print(sum.Text(metrics.SummaryOptions{NoColor: true}))
//
// # Semantics
//
// Metric names follow k6: 1–128 Unicode letters, numbers or '_', not starting with a
// number. Redeclaring a name with the same type and value type returns the existing
// metric; any other redeclaration is a *MetricError.
//
// Threshold keys are a metric name, optionally with a submetric selector
// "name{tag:value,…}" (quotes around values and spaces are allowed; k6's group form
// "checks{group:::outer::inner}" is just the tag "group"). A submetric aggregates the
// parent's samples whose tags contain all the pairs; it is shown in summaries as
// "name{tag:value}". Expressions are "method operator number" with k6's methods per
// type — counter: count, rate; gauge: value; rate: rate; trend: avg, min, max, med,
// p(N) with 0 ≤ N ≤ 100 — and operators < <= > >= == === !=. Every metric named must be
// declared before ParseThresholds (after the init context has run, as k6 does).
//
// While the test runs, EvaluateThresholds skips metrics that have no samples yet; at the
// end (final) they are evaluated on empty values (0), so "count>0" fails and "p(95)<200"
// passes, as in k6. abort is true when an abortOnFail threshold fails and at least its
// delayAbortEval has elapsed since SetStart. Counter rates divide by Elapsed.
//
// Trend percentiles are tokens.TrendSink's: k6's linear interpolation at p/100·(n−1),
// exact up to tokens.DefaultExactLimit samples per series, then within
// tokens.SketchRelativeError from a bounded-memory sketch, so millions of llm_itl
// samples take bounded memory.
//
// The engine builds k6's group tree from the samples of "checks" (tags "check" and
// "group", the group path being "" at the root and "::a::b" inside groups) and of
// "group_duration"; group and check ids are the hex MD5 of their path, as in k6.
//
// # Metrics the runner registers
//
// The runner declares k6's built-ins: iterations (counter), iteration_duration (trend,
// time), checks (rate), vus (gauge), vus_max (gauge), dropped_iterations (counter),
// data_received (counter, data), data_sent (counter, data), plus group_duration (trend,
// time) when groups are used; and the llm_* catalogue of package tokens (llm_reqs,
// llm_req_failed, llm_ttfb, llm_ttft, llm_ttfo, llm_itl, llm_tpot, llm_e2e,
// llm_req_duration, llm_prompt_tokens, llm_completion_tokens, llm_output_tps,
// llm_goodput).
//
// # Concurrency
//
// Registry and Engine are safe for concurrent use. Ingest takes one lock per batch and,
// for series it has seen before, allocates nothing: a series is found by its metric
// pointer, only metrics that carry submetrics match tags, and samples of one batch that
// share a tag map (as one request's samples do) share one match. A Summary is an
// independent deep copy: reading it never blocks Ingest, and its TrendViews are safe for
// concurrent use; its maps must not be written while others read them.
package metrics
