// Package xk6ext is the JavaScript module k6/x/tokenstorm: streaming LLM clients with
// per-token timing and automatic metrics, the embedded mock server, JSONL datasets and
// output-length samplers, for k6-style scripts.
//
// The module depends on the program running the script only through Host (host.go),
// whose semantics are k6's modules.VU, so tokenstorm's own runner (package js) hosts it
// and a small adapter outside this repository could host it in k6.
//
// # Lifecycle
//
// A host creates one RootModule per test run and, for each VU, one ModuleInstance when
// the VU's init context first imports the module:
//
//	root := xk6ext.NewRootModule()   // or with k6's run-wide options: WithNoConnectionReuse(), WithInsecureSkipTLSVerify()
//	defer root.Close() // joins async requests, stops the embedded mock, closes idle connections
//	// for each VU, in its init context, on its goroutine:
//	exports, err := root.Instantiate(host) // or root.NewModuleInstance(host).Exports()
//
// A script then uses it like any k6 module:
//
//	import storm from 'k6/x/tokenstorm';
//	const client = new storm.Client({ model: 'mock-model' }); // no url: the embedded mock
//	export default function () {
//	  const r = client.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 32 });
//	  // r.ttft_ms, r.itl_ms, r.completion_tokens …; llm_* metrics are emitted already
//	}
//
// index.d.ts in this folder documents the whole JavaScript surface.
//
// # Concurrency
//
// RootModule is goroutine-safe: VUs share it. A ModuleInstance and every JS object it
// creates belong to one VU and are used only on that VU's goroutine, as sobek requires.
// The async calls (chatAsync, completeAsync) run the request on a goroutine of their
// own, which touches only the llm.Client (goroutine-safe) and Host.Emit; the JS result
// is built back on the VU goroutine through Host.RegisterCallback. Datasets are parsed
// once per run and shared read-only; the sequential order's cursor is an atomic counter
// shared by all VUs, the random and zipf orders and the samplers keep a generator per VU.
package xk6ext
