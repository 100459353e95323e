package js_test

import (
	"context"
	"fmt"
	"io"

	"github.com/tokenstorm/tokenstorm/js"
)

// Run a script with k6's lifecycle and read the outcome from the Report.
func ExampleRun() {
	rep, err := js.Run(context.Background(), "testdata/example.js", js.Options{
		Stdout: io.Discard, Stderr: io.Discard, // the summary and logs go nowhere here
	})
	if err != nil {
		fmt.Println("output error:", err)
		return
	}
	passes, fails := rep.Summary.Check("arithmetic works")
	fmt.Println("exit code:", rep.ExitCode)
	fmt.Println("iterations:", rep.Summary.Counter("iterations"))
	fmt.Println("check passes/fails:", passes, fails)
	for _, th := range rep.Thresholds {
		fmt.Printf("threshold %s %s ok=%v\n", th.Metric, th.Expr, th.OK)
	}
	// Output:
	// exit code: 0
	// iterations: 3
	// check passes/fails: 3 0
	// threshold checks rate==1 ok=true
}

// Command-line overrides replace the script's execution options, as k6's -i does.
func ExampleRun_overrides() {
	iterations := int64(5)
	rep, _ := js.Run(context.Background(), "testdata/example.js", js.Options{
		Iterations: &iterations, Stdout: io.Discard, Stderr: io.Discard,
	})
	fmt.Println("iterations:", rep.Summary.Counter("iterations"))
	// Output:
	// iterations: 5
}
