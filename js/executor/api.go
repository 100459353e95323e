package executor

import (
	"context"
	"time"
)

// Executor names, exactly as k6 spells them in options.scenarios.
const (
	SharedIterations    = "shared-iterations"
	PerVUIterations     = "per-vu-iterations"
	ConstantVUs         = "constant-vus"
	RampingVUs          = "ramping-vus"
	ConstantArrivalRate = "constant-arrival-rate"
	RampingArrivalRate  = "ramping-arrival-rate"
)

// Defaults k6 documents for scenario options.
const (
	DefaultGracefulStop     = 30 * time.Second
	DefaultGracefulRampDown = 30 * time.Second
	DefaultMaxDuration      = 10 * time.Minute
	DefaultTimeUnit         = time.Second
	DefaultExec             = "default"
	DefaultVUs              = 1
	DefaultIterations       = 1
	// DefaultScenarioName is the name k6 gives the scenario derived from the shortcut
	// options (vus, duration, iterations, stages).
	DefaultScenarioName = "default"
)

// Stage is one step of a ramping executor: reach Target (VUs for ramping-vus,
// iterations per TimeUnit for ramping-arrival-rate) linearly over Duration.
type Stage struct {
	Duration time.Duration
	Target   int64
}

// Scenario is one entry of k6's options.scenarios with every default filled in. Fields
// that do not apply to Executor are zero.
type Scenario struct {
	Name         string
	Executor     string
	StartTime    time.Duration
	GracefulStop time.Duration
	Exec         string
	Env          map[string]string
	Tags         map[string]string

	VUs         int64         // shared-iterations, per-vu-iterations, constant-vus
	Iterations  int64         // shared-iterations (total), per-vu-iterations (per VU)
	Duration    time.Duration // constant-vus, constant-arrival-rate
	MaxDuration time.Duration // shared-iterations, per-vu-iterations

	Stages           []Stage // ramping-vus, ramping-arrival-rate
	StartVUs         int64   // ramping-vus
	GracefulRampDown time.Duration

	Rate            int64         // constant-arrival-rate: iterations per TimeUnit
	StartRate       int64         // ramping-arrival-rate
	TimeUnit        time.Duration // arrival-rate executors
	PreAllocatedVUs int64
	MaxVUs          int64 // arrival-rate executors; defaults to PreAllocatedVUs
}

// Iteration identifies one iteration to a VU, as k6/execution exposes it.
type Iteration struct {
	// Scenario is the scenario the iteration belongs to; read-only.
	Scenario *Scenario
	// InScenario is k6's scenario.iterationInTest: unique and 0-based within the scenario.
	InScenario int64
	// InVU is k6's vu.iterationInScenario: 0-based count of this VU's iterations in the
	// scenario.
	InVU int64
	// VUInScenario is the 0-based slot of the VU within the scenario. The VU's global id
	// (vu.idInTest) is the Pool's business.
	VUInScenario int64
}

// VU runs iterations. One VU runs one iteration at a time.
type VU interface {
	// RunIteration runs one iteration; it returns when the iteration finished or ctx
	// was cancelled (hard stop after gracefulStop). A non-nil error = the iteration failed.
	RunIteration(ctx context.Context, it Iteration) error
}

// Pool hands out initialised VUs; the JS runtime implements it.
type Pool interface {
	// Acquire returns an initialised idle VU, initialising a new one lazily when none is
	// idle. It blocks at most until ctx is done.
	Acquire(ctx context.Context) (VU, error)
	// Release gives a VU acquired with Acquire back to the pool.
	Release(VU)
}

// Hooks are optional callbacks. They are called from executor goroutines, concurrently,
// so they must be goroutine-safe and quick.
type Hooks struct {
	// Dropped is called once per iteration an arrival-rate executor could not start
	// because all of its maxVUs were busy (k6's dropped_iterations).
	Dropped func(sc *Scenario)
	// Lag is called once per iteration an arrival-rate executor starts, with how late it
	// started compared with its schedule.
	Lag func(sc *Scenario, lag time.Duration)
}

// Timer is what a Clock's timers must provide.
type Timer interface {
	// C delivers the time once the timer fires.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it stopped it.
	Stop() bool
	// Reset changes the timer to fire after d, as time.Timer.Reset (Go 1.23+ semantics:
	// no stale value is received after Stop or Reset).
	Reset(d time.Duration) bool
}

// Clock is the time source of a Run: exactly what a fake needs to provide.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) Timer
}

// Option configures a Run.
type Option func(*Run)

// WithClock makes the Run use c instead of the real clock.
func WithClock(c Clock) Option { return func(r *Run) { r.clock = c } }

// Progress is a snapshot of a Run.
type Progress struct {
	Elapsed   time.Duration // since Start
	Total     time.Duration // TotalDuration of the scenarios: an upper bound
	ActiveVUs int64
	Scenarios []ScenarioProgress // in the order of the scenarios given to NewRun
}

// ScenarioProgress is a snapshot of one scenario.
type ScenarioProgress struct {
	Name        string
	State       ScenarioState
	Started     int64 // iterations started
	Completed   int64 // iterations that returned before a hard stop (failed ones included)
	Failed      int64 // iterations whose RunIteration returned an error
	Interrupted int64 // iterations cut short by a hard stop
	Dropped     int64 // arrival-rate iterations not started for lack of a VU
	ActiveVUs   int64
	Elapsed     time.Duration // since the scenario started (0 before)
	Duration    time.Duration // startTime excluded; includes gracefulStop: an upper bound
	// Iterations is the number of iterations the scenario will run when it is known in
	// advance (shared-iterations, per-vu-iterations), else 0.
	Iterations int64
}

// ScenarioState is where a scenario is in its life.
type ScenarioState int

// Scenario states.
const (
	Waiting  ScenarioState = iota // before startTime
	Running                       // starting iterations
	Stopping                      // no new iterations; running ones get gracefulStop
	Done
)

// String names the state.
func (s ScenarioState) String() string {
	switch s {
	case Waiting:
		return "waiting"
	case Running:
		return "running"
	case Stopping:
		return "stopping"
	case Done:
		return "done"
	}
	return "unknown"
}
