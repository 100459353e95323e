package executor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// ErrStarted is returned by Start when the Run has been started before: a Run runs once.
var ErrStarted = errors.New("executor: run already started")

// Run executes a set of scenarios once. Its methods other than Start are safe to call
// from any goroutine at any time.
type Run struct {
	scenarios []Scenario
	pool      Pool
	hooks     Hooks
	clock     Clock

	planned, most int64
	total         time.Duration

	states []*scenarioState
	active atomic.Int64
	peak   atomic.Int64 // most VUs held at once since the last TakePeakVUs

	abortCtx context.Context
	abort    context.CancelFunc
	started  atomic.Bool

	mu             sync.Mutex
	startAt, endAt time.Time
	err            error
}

type scenarioState struct {
	state                                 atomic.Int32
	started, completed, failed, interrupt atomic.Int64
	dropped, active                       atomic.Int64
	mu                                    sync.Mutex
	begin, end                            time.Time
}

// NewRun validates scenarios (as built by ParseScenarios, FromShortcuts or by hand) and
// prepares a Run; nothing starts until Start. Validation errors are *OptionError. In
// scenarios built by hand, a zero Exec, VUs, Iterations, MaxDuration, TimeUnit or MaxVUs
// takes k6's default (zero is not valid for them); zero GracefulStop, StartTime,
// GracefulRampDown and StartVUs mean zero.
func NewRun(scenarios []Scenario, pool Pool, hooks Hooks, opts ...Option) (*Run, error) {
	if pool == nil {
		return nil, errors.New("executor: NewRun needs a Pool")
	}
	if len(scenarios) == 0 {
		return nil, optErr("scenarios", "must define at least one scenario")
	}
	r := &Run{scenarios: slices.Clone(scenarios), pool: pool, hooks: hooks, clock: realClock{}}
	for i := range r.scenarios {
		sc := &r.scenarios[i]
		if !validName(sc.Name) {
			return nil, optErr("scenarios."+sc.Name, "a scenario name may contain only letters, digits, '_' and '-'")
		}
		if slices.ContainsFunc(r.scenarios[:i], func(o Scenario) bool { return o.Name == sc.Name }) {
			return nil, optErr("scenarios."+sc.Name, "defined twice")
		}
		fillZeroDefaults(sc)
		if err := validate(sc, "scenarios."+sc.Name+"."); err != nil {
			return nil, err
		}
		sc.Stages = slices.Clone(sc.Stages)
		r.states = append(r.states, &scenarioState{})
	}
	for _, o := range opts {
		o(r)
	}
	r.planned = peakVUs(r.scenarios, func(sc *Scenario) int64 { p, _ := vusOf(sc); return p })
	r.most = peakVUs(r.scenarios, func(sc *Scenario) int64 { _, m := vusOf(sc); return m })
	r.total = TotalDuration(r.scenarios)
	r.abortCtx, r.abort = context.WithCancel(context.Background())
	return r, nil
}

// fillZeroDefaults gives k6's default to the fields of a scenario built in Go whose zero
// value is invalid anyway; a zero that means something (gracefulStop: 0s, startVUs: 0)
// is kept.
func fillZeroDefaults(sc *Scenario) {
	if sc.Exec == "" {
		sc.Exec = DefaultExec
	}
	switch sc.Executor {
	case SharedIterations, PerVUIterations:
		if sc.MaxDuration == 0 {
			sc.MaxDuration = DefaultMaxDuration
		}
		if sc.Iterations == 0 {
			sc.Iterations = DefaultIterations
		}
		fallthrough
	case ConstantVUs:
		if sc.VUs == 0 {
			sc.VUs = DefaultVUs
		}
	case ConstantArrivalRate, RampingArrivalRate:
		if sc.TimeUnit == 0 {
			sc.TimeUnit = DefaultTimeUnit
		}
		if sc.MaxVUs == 0 {
			sc.MaxVUs = sc.PreAllocatedVUs
		}
	}
}

// Scenarios returns the validated scenarios in run order; the caller must not modify
// them. Iteration.Scenario points into this slice.
func (r *Run) Scenarios() []Scenario { return r.scenarios }

// PlannedVUs is how many VUs to initialise before setup(): the peak, over the scenarios
// that may run at the same time, of the VUs they start with (vus, the largest
// ramping-vus target, preAllocatedVUs), as k6's execution plan counts them.
func (r *Run) PlannedVUs() int64 { return r.planned }

// MaxVUs is the most VUs the run may hold at once, counting arrival-rate maxVUs that the
// Pool initialises lazily (k6's vus_max at its peak).
func (r *Run) MaxVUs() int64 { return r.most }

// ActiveVUs is the number of VUs executors hold right now, for the vus metric.
func (r *Run) ActiveVUs() int64 { return r.active.Load() }

// TakePeakVUs returns the most VUs held at once since the previous call (or the start)
// and starts a new window from the VUs held now. A run shorter than the vus sampling
// period still has a faithful vus value this way: the VUs that ran, not the 0 left after
// the executors returned them.
func (r *Run) TakePeakVUs() int64 {
	return r.peak.Swap(r.active.Load())
}

// Abort hard-stops the run: no iteration starts any more and running ones have their
// context cancelled at once, without gracefulStop (k6's abortOnFail, a second Ctrl-C).
func (r *Run) Abort() { r.abort() }

func (r *Run) fail(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
	r.abort()
}

// Start runs all scenarios, each from its startTime, and blocks until every one has
// ended and every goroutine it started has returned.
//
// Cancelling ctx stops the run gracefully, as k6 does at the end of a duration: no new
// iteration starts, running ones get their scenario's gracefulStop to finish and are
// then cancelled. Use Abort for a hard stop. Start returns nil when the scenarios ran
// to their end or were stopped through ctx or Abort; an error means a VU could not be
// acquired from the Pool, in which case the run was aborted.
func (r *Run) Start(ctx context.Context) error {
	if !r.started.CompareAndSwap(false, true) {
		return ErrStarted
	}
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	hardCtx, cancelHard := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHard()
	stopAbort := context.AfterFunc(r.abortCtx, func() { cancelRun(); cancelHard() })
	defer stopAbort()

	r.mu.Lock()
	r.startAt = r.clock.Now()
	r.mu.Unlock()

	var wg sync.WaitGroup
	for i := range r.scenarios {
		wg.Go(func() { r.runScenario(runCtx, hardCtx, i) })
	}
	wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.endAt = r.clock.Now()
	return r.err
}

// Progress returns a snapshot of the run; cheap enough to call a few times a second.
func (r *Run) Progress() Progress {
	now := r.clock.Now()
	p := Progress{Total: r.total, ActiveVUs: r.active.Load(), Scenarios: make([]ScenarioProgress, len(r.scenarios))}
	r.mu.Lock()
	switch {
	case !r.endAt.IsZero():
		p.Elapsed = r.endAt.Sub(r.startAt)
	case !r.startAt.IsZero():
		p.Elapsed = now.Sub(r.startAt)
	}
	r.mu.Unlock()
	for i := range r.scenarios {
		sc, st := &r.scenarios[i], r.states[i]
		sp := ScenarioProgress{
			Name:        sc.Name,
			State:       ScenarioState(st.state.Load()),
			Started:     st.started.Load(),
			Completed:   st.completed.Load(),
			Failed:      st.failed.Load(),
			Interrupted: st.interrupt.Load(),
			Dropped:     st.dropped.Load(),
			ActiveVUs:   st.active.Load(),
			Duration:    length(sc) + sc.GracefulStop,
		}
		switch sc.Executor {
		case SharedIterations:
			sp.Iterations = sc.Iterations
		case PerVUIterations:
			sp.Iterations = sc.Iterations * sc.VUs
		}
		st.mu.Lock()
		switch {
		case !st.end.IsZero():
			sp.Elapsed = st.end.Sub(st.begin)
		case !st.begin.IsZero():
			sp.Elapsed = now.Sub(st.begin)
		}
		st.mu.Unlock()
		p.Scenarios[i] = sp
	}
	return p
}

// scenarioRun is one scenario while it runs.
type scenarioRun struct {
	r  *Run
	sc *Scenario
	st *scenarioState
	t0 time.Time

	// stopCtx ends when no new iteration may start; hardCtx when running ones must stop.
	stopCtx context.Context
	stop    context.CancelFunc
	hardCtx context.Context
	hard    context.CancelFunc

	seq    atomic.Int64 // next InScenario
	timeUp atomic.Bool  // the executor's own time limit stopped it
}

func (r *Run) runScenario(runCtx, hardBase context.Context, i int) {
	sc, st := &r.scenarios[i], r.states[i]
	defer st.state.Store(int32(Done))
	if sc.StartTime > 0 {
		r.mu.Lock()
		wait := sc.StartTime - r.clock.Now().Sub(r.startAt)
		r.mu.Unlock()
		if !sleep(runCtx, r.clock, wait) {
			return
		}
	}
	if runCtx.Err() != nil {
		return
	}
	s := &scenarioRun{r: r, sc: sc, st: st, t0: r.clock.Now()}
	s.stopCtx, s.stop = context.WithCancel(runCtx)
	defer s.stop()
	s.hardCtx, s.hard = context.WithCancel(hardBase)
	defer s.hard()
	st.mu.Lock()
	st.begin = s.t0
	st.mu.Unlock()
	st.state.Store(int32(Running))

	workersDone := make(chan struct{})
	limit := length(sc)
	if sc.Executor == RampingVUs || sc.Executor == ConstantArrivalRate || sc.Executor == RampingArrivalRate {
		limit = -1 // these end themselves on their schedule
	}
	var watcher sync.WaitGroup
	watcher.Go(func() { s.watch(workersDone, limit) })

	switch sc.Executor {
	case SharedIterations:
		s.runClosed(sc.VUs, func(int64) (int64, bool) {
			n := s.seq.Add(1) - 1
			return n, n < sc.Iterations
		})
		s.dropRemaining(sc.Iterations)
	case PerVUIterations:
		s.runClosed(sc.VUs, func(inVU int64) (int64, bool) {
			if inVU >= sc.Iterations {
				return 0, false
			}
			return s.seq.Add(1) - 1, true
		})
		s.dropRemaining(sc.Iterations * sc.VUs)
	case ConstantVUs:
		s.runClosed(sc.VUs, func(int64) (int64, bool) { return s.seq.Add(1) - 1, true })
	case RampingVUs:
		s.runRamping(workersDone)
	case ConstantArrivalRate:
		s.runArrivals(constantArrivals{rate: sc.Rate, unit: sc.TimeUnit, duration: sc.Duration})
	case RampingArrivalRate:
		s.runArrivals(newRampingArrivals(sc.StartRate, sc.TimeUnit, sc.Stages))
	}
	close(workersDone)
	watcher.Wait()
	st.mu.Lock()
	st.end = r.clock.Now()
	st.mu.Unlock()
}

// sleep waits d on clock; false when ctx ended first.
func sleep(ctx context.Context, clock Clock, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *scenarioRun) elapsed() time.Duration { return s.r.clock.Now().Sub(s.t0) }

// watch enforces the executor's time limit (limit < 0: none, the executor stops itself)
// and, once the scenario is stopping for whatever reason, gracefulStop.
func (s *scenarioRun) watch(workersDone <-chan struct{}, limit time.Duration) {
	if limit >= 0 {
		t := s.r.clock.NewTimer(limit - s.elapsed())
		select {
		case <-t.C():
			s.timeUp.Store(true)
			s.stop()
		case <-s.stopCtx.Done():
			t.Stop()
		case <-workersDone:
			t.Stop()
			return
		}
	} else {
		select {
		case <-s.stopCtx.Done():
		case <-workersDone:
			return
		}
	}
	s.st.state.CompareAndSwap(int32(Running), int32(Stopping))
	g := s.r.clock.NewTimer(s.sc.GracefulStop)
	defer g.Stop()
	select {
	case <-g.C():
		s.hard()
	case <-s.hardCtx.Done():
	case <-workersDone:
	}
}

func (s *scenarioRun) acquire() (VU, bool) {
	vu, err := s.r.pool.Acquire(s.stopCtx)
	if err != nil {
		if s.stopCtx.Err() == nil {
			s.r.fail(fmt.Errorf("executor: scenario %q: acquiring a VU: %w", s.sc.Name, err))
		}
		return nil, false
	}
	raiseTo(&s.r.peak, s.r.active.Add(1))
	s.st.active.Add(1)
	return vu, true
}

// raiseTo sets a to n if n is larger.
func raiseTo(a *atomic.Int64, n int64) {
	for {
		p := a.Load()
		if n <= p || a.CompareAndSwap(p, n) {
			return
		}
	}
}

func (s *scenarioRun) release(vu VU) {
	s.st.active.Add(-1)
	s.r.active.Add(-1)
	s.r.pool.Release(vu)
}

// iterate runs one iteration and accounts for it. An iteration whose context was
// cancelled by the time it returned was interrupted by a hard stop.
func (s *scenarioRun) iterate(ctx context.Context, vu VU, it Iteration) {
	s.st.started.Add(1)
	err := vu.RunIteration(ctx, it)
	if ctx.Err() != nil {
		s.st.interrupt.Add(1)
		return
	}
	s.st.completed.Add(1)
	if err != nil {
		s.st.failed.Add(1)
	}
}

func (s *scenarioRun) drop() {
	s.st.dropped.Add(1)
	if s.r.hooks.Dropped != nil {
		s.r.hooks.Dropped(s.sc)
	}
}

// dropRemaining reports the iterations an iteration executor did not start because
// maxDuration ran out, as k6 counts them in dropped_iterations.
func (s *scenarioRun) dropRemaining(total int64) {
	if !s.timeUp.Load() {
		return
	}
	for range total - s.st.started.Load() {
		s.drop()
	}
}

// runClosed runs the closed-model executors: vus VUs, each looping while next hands it
// an iteration number and the scenario is not stopping.
func (s *scenarioRun) runClosed(vus int64, next func(inVU int64) (int64, bool)) {
	// Every VU is in hand before the first iteration, as in k6: each slot keeps its own
	// VU for the whole scenario. Acquiring inside each slot's goroutine would let a slot
	// whose iterations are instant finish and hand its VU to a slot not started yet, so
	// "10 VUs" could run on one.
	held := make([]VU, 0, vus)
	for range vus {
		vu, ok := s.acquire()
		if !ok {
			for _, v := range held {
				s.release(v)
			}
			return
		}
		held = append(held, vu)
	}
	var wg sync.WaitGroup
	for slot, vu := range held {
		wg.Go(func() {
			defer s.release(vu)
			for inVU := int64(0); s.stopCtx.Err() == nil; inVU++ {
				n, ok := next(inVU)
				if !ok {
					return
				}
				s.iterate(s.hardCtx, vu, Iteration{Scenario: s.sc, InScenario: n, InVU: inVU, VUInScenario: int64(slot)})
			}
		})
	}
	wg.Wait()
}

// rampSlot is one VU position of ramping-vus. The controller activates and deactivates
// it; a deactivated slot finishes its iteration within gracefulRampDown, then hands its
// VU back. A slot reactivated in the meantime simply carries on, as in k6.
type rampSlot struct {
	wake chan struct{} // capacity 1: "active changed"

	mu       sync.Mutex
	active   bool
	running  bool
	cancel   context.CancelFunc // of the running iteration
	deadline time.Duration      // when the running iteration is hard-stopped; <0: none
}

func (sl *rampSlot) isActive() bool {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	return sl.active
}

func (s *scenarioRun) runRamping(workersDone chan struct{}) {
	plan := rampVUs{start: s.sc.StartVUs, stages: s.sc.Stages}
	n, _ := vusOf(s.sc)
	slots := make([]*rampSlot, n)
	for i := range slots {
		slots[i] = &rampSlot{wake: make(chan struct{}, 1), deadline: -1}
	}
	// Activate the starting VUs before any slot goroutine looks.
	s.applyRamp(slots, plan.start, 0)

	slotsDone := make(chan struct{})
	var ctl sync.WaitGroup
	ctl.Go(func() { s.rampController(slots, plan, slotsDone) })
	var wg sync.WaitGroup
	for i, sl := range slots {
		wg.Go(func() { s.rampSlotLoop(int64(i), sl) })
	}
	wg.Wait()
	close(slotsDone)
	ctl.Wait()
}

func (s *scenarioRun) rampSlotLoop(idx int64, sl *rampSlot) {
	var inVU int64
	for {
		for !sl.isActive() {
			select {
			case <-sl.wake:
			case <-s.stopCtx.Done():
				return
			}
		}
		vu, ok := s.acquire()
		if !ok {
			return
		}
		// One context per activation, not per iteration: the controller cancels it when
		// gracefulRampDown runs out, which also ends this activation.
		ctx, cancel := context.WithCancel(s.hardCtx)
		sl.mu.Lock()
		sl.cancel = cancel
		sl.mu.Unlock()
		for {
			sl.mu.Lock()
			if !sl.active || s.stopCtx.Err() != nil || ctx.Err() != nil {
				sl.running, sl.cancel, sl.deadline = false, nil, -1
				sl.mu.Unlock()
				break
			}
			sl.running, sl.deadline = true, -1
			sl.mu.Unlock()

			s.iterate(ctx, vu, Iteration{Scenario: s.sc, InScenario: s.seq.Add(1) - 1, InVU: inVU, VUInScenario: idx})
			inVU++

			sl.mu.Lock()
			sl.running, sl.deadline = false, -1
			sl.mu.Unlock()
		}
		cancel()
		s.release(vu)
		if s.stopCtx.Err() != nil {
			return
		}
	}
}

// applyRamp makes exactly the first vus slots active; a slot deactivated mid-iteration
// gets gracefulRampDown from now.
func (s *scenarioRun) applyRamp(slots []*rampSlot, vus int64, now time.Duration) {
	for i, sl := range slots {
		want := int64(i) < vus
		sl.mu.Lock()
		changed := want != sl.active
		if changed {
			sl.active = want
			sl.deadline = -1
			if !want && sl.running {
				sl.deadline = now + s.sc.GracefulRampDown
			}
		}
		sl.mu.Unlock()
		if changed {
			select {
			case sl.wake <- struct{}{}:
			default:
			}
		}
	}
}

// rampController moves the VU count along the stages, enforces gracefulRampDown, and
// stops the scenario at the end of the last stage (gracefulStop then applies). It
// returns when nothing is left for it to do or the slots are gone.
func (s *scenarioRun) rampController(slots []*rampSlot, plan rampVUs, slotsDone <-chan struct{}) {
	const never = time.Duration(math.MaxInt64)
	timer := s.r.clock.NewTimer(never)
	defer timer.Stop()
	stopped := false
	for {
		now := s.elapsed()
		if !stopped && s.stopCtx.Err() != nil {
			stopped = true
		}
		wake := never
		if !stopped {
			vus, next, ok := plan.at(now)
			if ok {
				s.applyRamp(slots, vus, now)
				wake = next
			} else {
				s.stop()
				stopped = true
			}
		}
		for _, sl := range slots {
			sl.mu.Lock()
			if sl.running && sl.deadline >= 0 {
				if sl.deadline <= now {
					sl.cancel()
					sl.deadline = -1
				} else {
					wake = min(wake, sl.deadline)
				}
			}
			sl.mu.Unlock()
		}
		if stopped && wake == never {
			return
		}
		var stopCh <-chan struct{}
		if !stopped {
			stopCh = s.stopCtx.Done()
		}
		timer.Reset(max(wake-now, 0))
		select {
		case <-timer.C():
		case <-stopCh:
			timer.Stop()
		case <-s.hardCtx.Done():
			return
		case <-slotsDone:
			return
		}
	}
}

// arrival is one scheduled iteration on its way to a VU.
type arrival struct {
	due time.Time
}

// runArrivals runs the open-model executors: a scheduler starts iteration k at
// plan.at(k) on a free VU, initialising another (up to maxVUs) when none is free and
// dropping the iteration when maxVUs are all busy. Free workers wait in a queue with
// room for all of them, so neither side ever blocks on the other.
func (s *scenarioRun) runArrivals(plan arrivals) {
	free := make(chan *arrivalWorker, s.sc.MaxVUs)
	var wg sync.WaitGroup
	defer wg.Wait()
	var workers int64
	newWorker := func(vu VU) *arrivalWorker {
		w := &arrivalWorker{s: s, idx: workers, vu: vu, work: make(chan arrival, 1), free: free}
		workers++
		return w
	}
	for range s.sc.PreAllocatedVUs {
		vu, ok := s.acquire()
		if !ok {
			s.stop()
			return
		}
		w := newWorker(vu)
		free <- w
		wg.Go(w.loop)
	}
	// The schedule starts once the pre-allocated VUs are in hand, so their set-up is
	// not counted as lag.
	t0 := s.r.clock.Now()
	timer := s.r.clock.NewTimer(time.Duration(math.MaxInt64))
	defer timer.Stop()
	wait := func(at time.Duration) bool {
		d := at - s.r.clock.Now().Sub(t0)
		if d <= 0 {
			return s.stopCtx.Err() == nil
		}
		timer.Reset(d)
		select {
		case <-timer.C():
			return true
		case <-s.stopCtx.Done():
			timer.Stop()
			return false
		}
	}
	for k := int64(0); ; k++ {
		at, ok := plan.at(k)
		if !ok {
			break
		}
		if !wait(at) {
			return
		}
		a := arrival{due: t0.Add(at)}
		select {
		case w := <-free:
			w.work <- a // never blocks: a free worker's slot is empty
		default:
			if workers >= s.sc.MaxVUs {
				s.drop()
				continue
			}
			w := newWorker(nil)
			w.work <- a
			wg.Go(func() {
				vu, ok := s.acquire()
				if !ok {
					s.drop()
					return
				}
				w.vu = vu
				w.loop()
			})
		}
	}
	if wait(plan.end()) {
		s.timeUp.Store(true)
	}
	s.stop()
}

// arrivalWorker is one VU of an arrival-rate executor.
type arrivalWorker struct {
	s    *scenarioRun
	idx  int64
	vu   VU
	inVU int64
	work chan arrival // capacity 1
	free chan<- *arrivalWorker
}

func (w *arrivalWorker) loop() {
	s := w.s
	defer s.release(w.vu)
	for {
		select {
		case a := <-w.work:
			if s.r.hooks.Lag != nil {
				s.r.hooks.Lag(s.sc, s.r.clock.Now().Sub(a.due))
			}
			s.iterate(s.hardCtx, w.vu, Iteration{Scenario: s.sc, InScenario: s.seq.Add(1) - 1, InVU: w.inVU, VUInScenario: w.idx})
			w.inVU++
			w.free <- w // never blocks: room for every worker
		case <-s.stopCtx.Done():
			// An arrival handed over as the scenario stopped did not start.
			select {
			case <-w.work:
				s.drop()
			default:
			}
			return
		}
	}
}
