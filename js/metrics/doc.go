// Package metrics is the metrics engine of tokenstorm's k6-style runner: a registry of
// declared metrics, an engine that aggregates samples into sinks, k6 thresholds, and the
// end-of-test summaries (text, --summary-export, handleSummary data).
package metrics
