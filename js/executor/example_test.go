package executor_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tokenstorm/tokenstorm/js/executor"
)

func ExampleParseScenarios() {
	scenarios, err := executor.ParseScenarios([]byte(`{
		"chat": {"executor": "constant-arrival-rate", "rate": 20, "duration": "1m",
		         "preAllocatedVUs": 10, "maxVUs": 50, "exec": "chat", "tags": {"kind": "chat"}},
		"warmup": {"executor": "shared-iterations", "iterations": 5}
	}`))
	if err != nil {
		panic(err)
	}
	for _, sc := range scenarios {
		fmt.Printf("%s: %s exec=%s gracefulStop=%v\n", sc.Name, sc.Executor, sc.Exec, sc.GracefulStop)
	}
	fmt.Println(scenarios[0].Rate, scenarios[0].TimeUnit, scenarios[0].MaxVUs)
	fmt.Println(scenarios[1].VUs, scenarios[1].Iterations, scenarios[1].MaxDuration)

	_, err = executor.ParseScenarios([]byte(`{"chat": {"executor": "constant-arrival-rate", "rate": 0,
		"duration": "1m", "preAllocatedVUs": 1}}`))
	var oe *executor.OptionError
	fmt.Println(errors.As(err, &oe), oe.Field)
	// Output:
	// chat: constant-arrival-rate exec=chat gracefulStop=30s
	// warmup: shared-iterations exec=default gracefulStop=30s
	// 20 1s 50
	// 1 5 10m0s
	// true scenarios.chat.rate
}

func ExampleResolve() {
	vus, d := int64(10), 30*time.Second
	// k6 run -u 10 -d 30s script.js, where the script has no execution options.
	scenarios, err := executor.Resolve(executor.Shortcuts{}, nil, executor.Shortcuts{VUs: &vus, Duration: &d})
	if err != nil {
		panic(err)
	}
	sc := scenarios[0]
	fmt.Println(sc.Name, sc.Executor, sc.VUs, sc.Duration)
	// Output: default constant-vus 10 30s
}

// pool is a minimal Pool: VUs that count their iterations.
type pool struct {
	mu   sync.Mutex
	idle []executor.VU
	runs atomic.Int64
}

type vu struct{ p *pool }

func (v vu) RunIteration(ctx context.Context, it executor.Iteration) error {
	v.p.runs.Add(1)
	return nil
}

func (p *pool) Acquire(context.Context) (executor.VU, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.idle); n > 0 {
		v := p.idle[n-1]
		p.idle = p.idle[:n-1]
		return v, nil
	}
	return vu{p}, nil
}

func (p *pool) Release(v executor.VU) {
	p.mu.Lock()
	p.idle = append(p.idle, v)
	p.mu.Unlock()
}

func ExampleRun() {
	scenarios, err := executor.ParseScenarios([]byte(`{
		"each": {"executor": "per-vu-iterations", "vus": 4, "iterations": 25}
	}`))
	if err != nil {
		panic(err)
	}
	p := &pool{}
	run, err := executor.NewRun(scenarios, p, executor.Hooks{})
	if err != nil {
		panic(err)
	}
	fmt.Println("planned VUs:", run.PlannedVUs())
	if err := run.Start(context.Background()); err != nil {
		panic(err)
	}
	sp := run.Progress().Scenarios[0]
	fmt.Println(sp.Name, sp.State, sp.Completed, p.runs.Load())
	// Output:
	// planned VUs: 4
	// each done 100 100
}
