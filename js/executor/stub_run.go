package executor

import (
	"context"
	"errors"
	"time"
)

// Run executes a set of scenarios once.
type Run struct {
	scenarios []Scenario
	pool      Pool
	hooks     Hooks
	clock     Clock
}

// NewRun validates scenarios and prepares a Run; nothing starts until Start.
func NewRun(scenarios []Scenario, pool Pool, hooks Hooks, opts ...Option) (*Run, error) {
	r := &Run{scenarios: scenarios, pool: pool, hooks: hooks}
	for _, o := range opts {
		o(r)
	}
	return r, nil
}

// PlannedVUs is the number of VUs to initialise before setup().
func (r *Run) PlannedVUs() int64 { return 0 }

// MaxVUs is the most VUs the run can hold at once, lazily initialised ones included.
func (r *Run) MaxVUs() int64 { return 0 }

// Start runs all scenarios and blocks until they end.
func (r *Run) Start(ctx context.Context) error { return errors.New("executor: not implemented") }

// Abort hard-stops every running iteration now.
func (r *Run) Abort() {}

// ActiveVUs is the number of VUs currently held by executors.
func (r *Run) ActiveVUs() int64 { return 0 }

// Progress returns a snapshot.
func (r *Run) Progress() Progress { return Progress{} }

// TotalDuration is the longest the scenarios can take.
func TotalDuration(scenarios []Scenario) time.Duration { return 0 }
