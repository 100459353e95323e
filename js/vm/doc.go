// Package vm runs k6-style JavaScript on sobek: ES modules, the k6 core modules and one
// event loop per virtual user. It is the engine under tokenstorm's runner (package js),
// and knows nothing of scheduling beyond the executor.Iteration it is handed.
//
// A Program is compiled once per run: Compile parses and compiles the entry script and
// every local module it imports, and checks every import, without running anything.
// The compiled modules are shared read-only by all VUs. Each VU (Program.NewVU) has its
// own sobek runtime; NewVU runs the init context (the top-level code of every module,
// once per VU), then the VU runs iterations (RunIteration, which implements
// executor.VU) and lifecycle functions (Call, CallJSON).
//
//	prog, err := vm.Compile("script.js", vm.Config{Env: env, Registry: reg, Emit: engine.Ingest})
//	if err != nil {
//		return err // a *vm.ScriptError prints as file:line:col: message
//	}
//	vu, err := prog.NewVU(ctx, 1) // init context; exceptions are *vm.ScriptError too
//	opts, _ := vu.Options()       // JSON.stringify(options)
//	data, _ := vu.CallJSON(ctx, "setup")
//	vu.SetSetupData(data)
//	err = vu.RunIteration(ctx, executor.Iteration{Scenario: &sc})
//
// # What scripts get
//
// Imports: local files (./x.js, ../x.js, absolute paths, file:// URLs), with cycles; the
// core modules k6 (check, group, sleep, fail, randomSeed), k6/metrics (Counter, Gauge,
// Rate, Trend; declared in the init context only), k6/execution (vu incl. tags,
// scenario, test.abort and test.options, and instance when Config.Instance is set, else
// its properties throw "not supported"), k6/data (SharedArray); and the native modules
// of Config.Modules. Any other module ("k6/http"…), a remote URL, a bare name or a
// dynamic import() is a *ScriptError naming it; nothing is silently ignored.
//
// Globals: __ENV (Config.Env overlaid with the scenario's env), __VU (0 during Call, as
// k6 runs setup and teardown outside any VU), __ITER, console.* (to Config.Logger at
// k6's levels), open() (init context only, relative to the calling module, "b" for an
// ArrayBuffer), setTimeout, setInterval, clearTimeout, clearInterval.
//
// Go values handed to JS (module exports) follow k6's naming: a `js:"name"` struct tag
// wins, otherwise fields and methods are seen with their first letter lower-cased.
//
// # Samples and tags
//
// check emits `checks` (tags check, group), group emits `group_duration`, every
// completed iteration emits `iterations` and `iteration_duration`. Every sample carries
// the VU's tags, lowest precedence first: Config.Tags, the scenario's tags, exec.vu.tags,
// then scenario=<name> and group=<path> ("" at the root, "::a::b" nested); a sample's own
// tags win. Failed iterations (an exception) are counted, as in k6; iterations cut short
// by a cancelled context are not, and return an error wrapping ErrInterrupted.
//
// # SharedArray
//
// The function given to new SharedArray(name, fn) runs once per Program, in the first
// VU that reaches it; its result is kept as one JSON text per element. Every VU sees a
// read-only array whose elements are parsed on access and deep-frozen, a fresh copy each
// time as k6 documents, so no JS object ever crosses runtimes.
//
// # Event loop
//
// Modules reserve a slot with Host.RegisterCallback on the VU goroutine and fill it,
// exactly once and from any goroutine, with a callback that then runs on the VU
// goroutine. An iteration lasts until its function returned, its promise settled, every
// reserved slot was filled and run, and promise jobs are drained. A rejected promise
// nobody handled fails the iteration with its message ("Uncaught (in promise) …"). When
// the iteration's context is cancelled, running JS is interrupted (sobek interrupts
// cannot be caught by try/catch), pending slots are dropped, and an enqueue arriving
// later is a no-op. exec.test.abort uses the same interrupt and returns an *AbortError.
//
// # Concurrency
//
// A sobek runtime is not goroutine-safe, so each VU is driven by one goroutine at a
// time: NewVU, RunIteration, Call, Options, Exports and SetSetupData must not overlap for
// the same VU, and module code touches the runtime only on that goroutine (inside calls
// from JS or inside event-loop callbacks). Emit, Context and the enqueue functions from
// RegisterCallback may be called from any goroutine. Different VUs run in parallel; the
// Program, its compiled modules, file cache and SharedArrays are shared and
// goroutine-safe.
package vm
