package xk6ext_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/tokenstorm/tokenstorm/js/vm"
	"github.com/tokenstorm/tokenstorm/tokens"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// A host runs a script that imports the module: one RootModule per run, one instance per
// VU. This one is tokenstorm's own js/vm; the request goes to the embedded mock because
// the Client names no url.
func Example() {
	root := xk6ext.NewRootModule()
	defer root.Close()

	dir, _ := os.MkdirTemp("", "xk6ext-example")
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "main.js")
	_ = os.WriteFile(script, []byte(`
import storm from 'k6/x/tokenstorm';
const client = new storm.Client({ model: 'mock-model' });
export default function () {
  const r = client.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });
  return [r.ok, r.completion_tokens, r.finish_reason, r.itl_ms.length].join(' ');
}
`), 0o644)

	var reqs atomic.Int64
	prog, err := vm.Compile(script, vm.Config{
		Modules: map[string]vm.ModuleFactory{
			xk6ext.ImportPath: func(h xk6ext.Host) (vm.Exports, error) {
				ex, err := root.Instantiate(h)
				return vm.Exports(ex), err
			},
		},
		Emit: func(samples []xk6ext.Sample) {
			for _, s := range samples {
				if s.Metric.Name == tokens.MetricReqs {
					reqs.Add(int64(s.Value))
				}
			}
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	vu, err := prog.NewVU(ctx, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := vu.Call(ctx, "default")
	fmt.Println(out, err)
	fmt.Println("llm_reqs:", reqs.Load())
	// Output:
	// true 8 length 7 <nil>
	// llm_reqs: 1
}

// ParseDataset is what storm.dataset runs once per test run; a bad line is reported as
// file:line.
func ExampleParseDataset() {
	ds, err := xk6ext.ParseDataset("prompts.jsonl", []byte(`{"prompt": "Tell me a joke", "max_tokens": 64}
{"messages": [{"role": "user", "content": "Hello"}]}
`))
	fmt.Println(ds.Len(), err)

	_, err = xk6ext.ParseDataset("prompts.jsonl", []byte("{\"prompt\": \"ok\"}\n{\"text\": \"no\"}\n"))
	fmt.Println(err)
	// Output:
	// 2 <nil>
	// tokenstorm: dataset prompts.jsonl:2: want "messages" or "prompt"
}
