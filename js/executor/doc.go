// Package executor schedules k6-style scenarios: it parses and validates
// options.scenarios and the vus/duration/iterations/stages shortcuts with k6's names and
// defaults, and runs the six k6 executors (shared-iterations, per-vu-iterations,
// constant-vus, ramping-vus, constant-arrival-rate, ramping-arrival-rate) over VUs that
// it borrows from a Pool. It knows nothing of JavaScript: the js runtime implements
// Pool and VU, and this package decides when and on which VU each iteration runs.
//
// # Example
//
//	scenarios, err := executor.ParseScenarios([]byte(`{
//	    "chat": {"executor": "constant-arrival-rate", "rate": 20, "duration": "1m",
//	             "preAllocatedVUs": 10, "maxVUs": 50}
//	}`))
//	if err != nil { ... }          // *executor.OptionError: "scenarios.chat.rate: ..."
//	run, err := executor.NewRun(scenarios, pool, executor.Hooks{
//	    Dropped: func(sc *executor.Scenario) { dropped.Add(1) },
//	    Lag:     func(sc *executor.Scenario, d time.Duration) { lag.Record(d) },
//	})
//	// the caller initialises run.PlannedVUs() VUs in its pool before setup(), as k6 does
//	err = run.Start(ctx)           // blocks; cancel ctx for a graceful stop
//
// # Semantics
//
// Everything follows k6's documentation: gracefulStop (default 30s) after an executor's
// time is up, then the iterations' contexts are cancelled; maxDuration (default 10m) for
// the iteration executors, whose unstarted iterations then count as dropped;
// gracefulRampDown for VUs that ramping-vus removes; startTime offsets; arrival-rate
// iterations spread evenly over timeUnit, dropped when maxVUs are all busy.
// ParseScenarios keeps the JSON object's order of scenarios. Deliberate differences:
// durations shorter than 1s are accepted, and an arrival-rate iteration that finds no
// free VU while fewer than maxVUs exist waits for a new VU instead of being dropped
// (its lateness is reported through Hooks.Lag).
//
// Resolve combines the script's options with command-line shortcuts the way k6
// consolidates them; Resolve's documentation lists the rules.
//
// Arrival-rate executors compute iteration k's start time as a pure function of k (see
// the plan types in schedule.go), so a late wake-up never accumulates into drift and a
// run of length T starts exactly ceil(∫rate) iterations unless VUs run out; each
// iteration's lateness against that schedule is reported through Hooks.Lag. Expect a
// lag of the order of a millisecond on Linux: the Go runtime sleeps in whole
// milliseconds when a timer is less than 1ms away. Iterations never start early.
//
// # Concurrency
//
// A Run is started once. Start blocks until every goroutine it started has returned;
// ActiveVUs, Progress and Abort may be called from any goroutine meanwhile. Each VU runs
// one iteration at a time on an executor goroutine. Hooks and the Pool are called
// concurrently from executor goroutines and must be goroutine-safe.
package executor
