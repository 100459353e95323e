// Package js runs k6-style scripts: it is the engine behind `tokenstorm run` and the
// gotest package. It ties together the JS engine (js/vm: sobek VUs, ES modules, the k6
// core modules), the executors (js/executor), the metrics engine with thresholds and
// summaries (js/metrics) and the module k6/x/tokenstorm (xk6ext), following k6's
// documented lifecycle:
//
//  1. compile the script and run the init context once (VU 0) to read `options`;
//     custom metrics declared there exist before thresholds naming them are parsed;
//  2. validate the options (unknown or unsupported ones are an error, exit 104: see
//     docs/scripting.md for the table) and resolve the scenarios from the script's
//     options and the command line's -u/-d/-i/-s, as k6 consolidates them;
//  3. initialise the planned VUs (in parallel, before anything is measured), run
//     setup() once and hand its JSON result to every VU;
//  4. run the executors; VUs beyond the planned ones (arrival-rate maxVUs) are
//     initialised lazily; `vus`/`vus_max` are sampled every second, thresholds with
//     abortOnFail evaluated every 2 s, a progress line redrawn on a terminal;
//  5. teardown(data), even after Ctrl-C or an abort, as k6 does;
//  6. handleSummary(data) routing its result to stdout, stderr and files, or the text
//     summary; then --summary-export.
//
// The outcome is a Report whose ExitCode is k6's: 0, 99 (thresholds), 100/101 (setup or
// teardown timeout), 104 (options), 105 (interrupted), 107 (script error), 108
// (exec.test.abort()).
//
// Worked example: run a script for 10 iterations on 2 VUs, whatever its own options say,
// and inspect what was measured:
//
//	rep, err := js.Run(ctx, "examples/quickstart.js", js.Options{
//		VUs: &two, Iterations: &ten, Quiet: true,
//	})
//	if err != nil { … } // an output could not be written
//	if rep.ExitCode != js.ExitOK { log.Printf("exit %d: %v", rep.ExitCode, rep.Err) }
//	p95 := rep.Summary.Trend("llm_ttft").P(95)
//
// Concurrency: Run is safe to call from several goroutines (each call is an independent
// run with its own registry, engine, VUs and module state); within a run every VU has its
// own goroutine and sobek runtime, samples flow into the goroutine-safe metrics engine,
// and every goroutine a run starts is joined before Run returns. Cancelling ctx is the
// equivalent of Ctrl-C: iterations are interrupted, teardown and the summary still run.
package js
