package vm_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tokenstorm/tokenstorm/js/executor"
	"github.com/tokenstorm/tokenstorm/js/vm"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// A script is compiled once, each VU runs its init context, then iterations; samples
// reach Config.Emit with their tags merged.
func Example() {
	dir, _ := os.MkdirTemp("", "vm-example")
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "script.js")
	_ = os.WriteFile(script, []byte(`
		import { check, group } from 'k6';
		export const options = { vus: 1, iterations: 1 };
		export default function () {
			group('api', () => {
				check(__ENV.TARGET, { 'target set': (t) => t === 'mock' });
			});
		}
	`), 0o644)

	prog, err := vm.Compile(script, vm.Config{
		Env: map[string]string{"TARGET": "mock"},
		Emit: func(samples []xk6ext.Sample) {
			for _, s := range samples {
				if s.Metric.Name == "checks" {
					fmt.Printf("%s %v check=%q group=%q scenario=%q\n",
						s.Metric.Name, s.Value, s.Tags["check"], s.Tags["group"], s.Tags["scenario"])
				}
			}
		},
	})
	if err != nil {
		fmt.Println(err) // a *vm.ScriptError: file:line:col: message
		return
	}
	vu, err := prog.NewVU(context.Background(), 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	opts, _ := vu.Options()
	fmt.Println(string(opts))
	sc := &executor.Scenario{Name: "default", Exec: "default"}
	if err := vu.RunIteration(context.Background(), executor.Iteration{Scenario: sc}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"vus":1,"iterations":1}
	// checks 1 check="target set" group="::api" scenario="default"
}
