package vm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/grafana/sobek"

	"github.com/tokenstorm/tokenstorm/js/executor"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// ErrInterrupted is wrapped by RunIteration's error when the iteration was cut short
// because its context was cancelled (a hard stop). Such iterations emit no iterations or
// iteration_duration samples, as in k6.
var ErrInterrupted = errors.New("iteration interrupted")

// VU is one virtual user: its own sobek runtime, module instances, event loop and
// execution state. A VU is used by one goroutine at a time; only Emit and the enqueue
// functions returned by RegisterCallback may be called from other goroutines.
type VU struct {
	p       *Program
	id      int64
	rt      *sobek.Runtime
	natives map[*nativeModule]*nativeInstance
	options json.RawMessage
	loop    *eventLoop

	ctx      atomic.Pointer[ctxBox] // read by Context from any goroutine
	inInit   bool
	inCall   bool
	jsonStr  sobek.Callable
	jsonPars sobek.Callable
	freeze   sobek.Callable

	// execution state, VU goroutine only
	it          executor.Iteration
	iterInRun   int64 // vu.iterationInInstance
	started     time.Time
	groupPath   string
	userTags    map[string]string
	scenario    *scenarioT
	scenarioEnv map[*scenarioT]sobek.Value
	baseEnv     sobek.Value
	funcs       map[string]sobek.Callable
	setupRaw    json.RawMessage
	setupVal    sobek.Value
	setupParsed bool
	rejected    []*sobek.Promise
	timers      map[int64]*jsTimer
	nextTimer   int64
	tagCache    map[string]*groupTags // by group path
	scratch     [2]xk6ext.Sample

	// tags is the merged tag set samples get (Config.Tags, scenario, scenario tags,
	// exec.vu.tags, group). Published as an immutable map so Emit can read it from any
	// goroutine.
	tags atomic.Pointer[map[string]string]

	interruptWG sync.WaitGroup
}

var (
	_ xk6ext.Host = (*VU)(nil)
	_ executor.VU = (*VU)(nil)
)

// NewVU creates VU id (1-based; 0 for a VU that only runs setup/teardown) and runs the
// init context: native modules are instantiated, then the script's top-level code of
// every module runs once, with the event loop driven until top-level await settles.
// An exception is a *ScriptError with the file:line:col of the throw.
func (p *Program) NewVU(ctx context.Context, id int64) (*VU, error) {
	rt := sobek.New()
	rt.SetFieldNameMapper(fieldNameMapper{})
	vu := &VU{
		p:       p,
		id:      id,
		rt:      rt,
		natives: make(map[*nativeModule]*nativeInstance, len(p.order)),
		loop:    newEventLoop(),
		inInit:  true,
		funcs:   make(map[string]sobek.Callable),
	}
	vu.setContext(ctx)
	vu.publishTags()
	rt.SetPromiseRejectionTracker(vu.trackRejection)
	rt.SetImportModuleDynamically(func(ref any, spec sobek.Value, payload any) {
		rt.FinishLoadingImportModule(ref, spec, payload, nil, rt.NewTypeError(
			fmt.Sprintf("dynamic import(%q) is not supported by tokenstorm: use a static import", spec.String())))
	})
	if err := vu.installGlobals(); err != nil {
		return nil, err
	}
	for _, m := range p.order {
		var inst *nativeInstance
		err := protectErr(func() (err error) { inst, err = vu.instantiate(m); return err })
		if err != nil {
			return nil, &ScriptError{File: p.path, Message: err.Error(), cause: err}
		}
		vu.natives[m] = inst
	}

	p.setInitVU(rt, vu)
	stop := vu.watch(ctx)
	var promise *sobek.Promise
	err := protectErr(func() error {
		promise = rt.CyclicModuleRecordEvaluate(p.entry, p.resolve)
		return nil
	})
	if err == nil {
		err = vu.settle(ctx, promise)
	}
	vu.unwatch(stop)
	p.setInitVU(rt, nil)
	vu.loop.reset()
	vu.stopTimers()
	if err != nil {
		return nil, err
	}
	if err := vu.readOptions(); err != nil {
		return nil, err
	}
	vu.inInit = false
	return vu, nil
}

// settle drives the event loop until promise (module evaluation or an async function's
// result) is no longer pending and nothing else is pending, then reports a rejection or
// an unhandled rejected promise as a *ScriptError.
func (vu *VU) settle(ctx context.Context, promise *sobek.Promise) error {
	loopErr := vu.loop.run(ctx)
	if promise != nil {
		switch promise.State() {
		case sobek.PromiseStateRejected:
			vu.handled(promise)
			return vu.rejectionError(promise.Result())
		case sobek.PromiseStatePending:
			if loopErr == nil && ctx.Err() != nil {
				loopErr = ctx.Err()
			}
		}
	}
	if loopErr != nil {
		return errorFromJS(loopErr)
	}
	if len(vu.rejected) > 0 {
		p := vu.rejected[0]
		vu.rejected = vu.rejected[:0]
		err := vu.rejectionError(p.Result())
		if se, ok := err.(*ScriptError); ok {
			se.Message = "Uncaught (in promise) " + se.Message
		}
		return err
	}
	return nil
}

// rejectionError turns a rejection reason into a *ScriptError, using the Error object's
// stack for the position.
func (vu *VU) rejectionError(reason sobek.Value) error {
	if reason == nil {
		return &ScriptError{Message: "promise rejected with undefined"}
	}
	if ex, ok := reason.Export().(error); ok {
		var se *ScriptError
		if errors.As(ex, &se) {
			return se
		}
		if out := errorFromJS(ex); out != nil {
			var se2 *ScriptError
			if errors.As(out, &se2) && se2.File != "" {
				return se2
			}
		}
	}
	out := &ScriptError{Message: jsErrorMessage(reason), Value: reason.Export()}
	if o, ok := reason.(*sobek.Object); ok {
		if st := o.Get("stack"); st != nil && !sobek.IsUndefined(st) {
			out.Stack, out.File, out.Line, out.Column = parseStack(st.String())
		}
	}
	return out
}

func (vu *VU) trackRejection(p *sobek.Promise, op sobek.PromiseRejectionOperation) {
	switch op {
	case sobek.PromiseRejectionReject:
		vu.rejected = append(vu.rejected, p)
	case sobek.PromiseRejectionHandle:
		vu.handled(p)
	}
}

func (vu *VU) handled(p *sobek.Promise) {
	for i, q := range vu.rejected {
		if q == p {
			vu.rejected = append(vu.rejected[:i], vu.rejected[i+1:]...)
			return
		}
	}
}

// watch interrupts the runtime when ctx is done, so a busy loop or a pending await
// cannot outlive a hard stop. unwatch must follow before the runtime is used again.
func (vu *VU) watch(ctx context.Context) func() bool {
	vu.interruptWG.Add(1)
	return context.AfterFunc(ctx, func() {
		defer vu.interruptWG.Done()
		vu.rt.Interrupt(fmt.Errorf("%w: %w", ErrInterrupted, context.Cause(ctx)))
	})
}

func (vu *VU) unwatch(stop func() bool) {
	if stop() {
		vu.interruptWG.Done()
	}
	vu.interruptWG.Wait()
	vu.rt.ClearInterrupt()
}

// exported returns the value the entry module exports as name, following renames and
// re-exports (sobek keys a module's bindings by local name), or nil.
func (vu *VU) exported(name string) sobek.Value {
	b, ambiguous := vu.p.entry.ResolveExport(name)
	if b == nil || ambiguous {
		return nil
	}
	if b.BindingName == "*namespace*" {
		return vu.rt.NamespaceObjectFor(b.Module)
	}
	mi := vu.rt.GetModuleInstance(b.Module)
	if mi == nil {
		return nil
	}
	return mi.GetBindingValue(b.BindingName)
}

func (vu *VU) readOptions() error {
	v := vu.exported("options")
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		vu.options = json.RawMessage("{}")
		return nil
	}
	s, err := vu.jsonStr(sobek.Undefined(), v)
	if err != nil {
		return errorFromJS(err)
	}
	if sobek.IsUndefined(s) {
		vu.options = json.RawMessage("{}")
		return nil
	}
	vu.options = json.RawMessage(s.String())
	return nil
}

// Options returns JSON.stringify of the script's exported options, "{}" when it exports
// none. It is read once, at the end of the init context.
func (vu *VU) Options() (json.RawMessage, error) {
	return vu.options, nil
}

// Exports returns the names of the entry module's exports that are functions (default,
// setup, teardown, handleSummary, scenario exec functions), sorted.
func (vu *VU) Exports() []string {
	var out []string
	for _, n := range vu.p.names {
		if _, ok := sobek.AssertFunction(vu.exported(n)); ok {
			out = append(out, n)
		}
	}
	return out
}

// ID is the VU's id (vu.idInTest).
func (vu *VU) ID() int64 { return vu.id }

// SetSetupData gives the VU setup()'s result as JSON; each VU parses it once, on first
// use, so the data is a private copy per VU as in k6. Nil or "null" means no data.
func (vu *VU) SetSetupData(data json.RawMessage) {
	vu.setupRaw = data
	vu.setupParsed = false
	vu.setupVal = nil
}

func (vu *VU) setupData() (sobek.Value, error) {
	if vu.setupParsed {
		return vu.setupVal, nil
	}
	vu.setupParsed = true
	vu.setupVal = sobek.Undefined()
	if len(vu.setupRaw) == 0 {
		return vu.setupVal, nil
	}
	v, err := vu.jsonPars(sobek.Undefined(), vu.rt.ToValue(string(vu.setupRaw)))
	if err != nil {
		return nil, errorFromJS(err)
	}
	vu.setupVal = v
	return v, nil
}

func (vu *VU) function(name string) (sobek.Callable, error) {
	if fn, ok := vu.funcs[name]; ok {
		return fn, nil
	}
	v := vu.exported(name)
	fn, ok := sobek.AssertFunction(v)
	if !ok {
		return nil, &ScriptError{File: vu.p.path, Message: fmt.Sprintf("function %q is not exported by the script", name)}
	}
	vu.funcs[name] = fn
	return fn, nil
}

// RunIteration implements executor.VU: it runs it.Scenario.Exec (default "default")
// with the setup data, drives the event loop until every callback is done, and emits
// iterations and iteration_duration. An exception (or a rejected promise) fails the
// iteration with a *ScriptError carrying the JS stack; a cancelled ctx cuts it short
// with an error wrapping ErrInterrupted.
func (vu *VU) RunIteration(ctx context.Context, it executor.Iteration) error {
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	vu.enterIteration(ictx, it)
	name := "default"
	if it.Scenario != nil && it.Scenario.Exec != "" {
		name = it.Scenario.Exec
	}
	fn, err := vu.function(name)
	if err != nil {
		vu.leave()
		return err
	}
	data, err := vu.setupData()
	if err != nil {
		vu.leave()
		return err
	}
	start := time.Now()
	stop := vu.watch(ictx)
	err = vu.call(ictx, fn, data)
	vu.unwatch(stop)
	end := time.Now()
	vu.leave()
	vu.iterInRun++

	if ctx.Err() != nil && (err == nil || errors.Is(err, ErrInterrupted) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		if err == nil {
			vu.emitIteration(start, end) // finished just as the stop came: it completed
			return nil
		}
		return fmt.Errorf("%w: %w", ErrInterrupted, context.Cause(ctx))
	}
	vu.emitIteration(start, end)
	return err
}

// call invokes fn and drives the event loop until fn's work (and its promise, for async
// functions) is done.
func (vu *VU) call(ctx context.Context, fn sobek.Callable, args ...sobek.Value) error {
	v, err := protect(fn, args)
	if err != nil {
		vu.rejected = vu.rejected[:0]
		return errorFromJS(err)
	}
	var promise *sobek.Promise
	if o, ok := v.(*sobek.Object); ok {
		promise, _ = o.Export().(*sobek.Promise)
	}
	return vu.settle(ctx, promise)
}

// callResult is call returning the settled value.
func (vu *VU) callResult(ctx context.Context, fn sobek.Callable, args ...sobek.Value) (sobek.Value, error) {
	v, err := protect(fn, args)
	if err != nil {
		vu.rejected = vu.rejected[:0]
		return nil, errorFromJS(err)
	}
	var promise *sobek.Promise
	if o, ok := v.(*sobek.Object); ok {
		promise, _ = o.Export().(*sobek.Promise)
	}
	if err := vu.settle(ctx, promise); err != nil {
		return nil, err
	}
	if promise != nil {
		if promise.State() != sobek.PromiseStateFulfilled {
			return nil, &ScriptError{File: vu.p.path, Message: "the function's promise never settled"}
		}
		return promise.Result(), nil
	}
	return v, nil
}

func (vu *VU) enterIteration(ctx context.Context, it executor.Iteration) {
	vu.setContext(ctx)
	vu.it = it
	vu.started = time.Now()
	vu.rejected = vu.rejected[:0]
	if it.Scenario != vu.scenario {
		vu.scenario = it.Scenario
		vu.setEnvFor(it.Scenario)
		vu.groupPath = ""
		vu.invalidateTags()
	}
	// k6's __ITER counts the VU's iterations across scenarios (vu.iterationInInstance).
	_ = vu.rt.Set("__ITER", vu.iterInRun)
}

// leave ends an iteration or call: pending callbacks are dropped, timers stopped, the
// group reset.
func (vu *VU) leave() {
	vu.loop.reset()
	vu.stopTimers()
	vu.rejected = vu.rejected[:0]
	if vu.groupPath != "" {
		vu.groupPath = ""
		vu.publishTags()
	}
}

func (vu *VU) emitIteration(start, end time.Time) {
	tags := *vu.tags.Load()
	vu.scratch[0] = xk6ext.Sample{Metric: vu.p.builtin.iterations, Time: end, Value: 1, Tags: tags}
	vu.scratch[1] = xk6ext.Sample{Metric: vu.p.builtin.iterationDuration, Time: end,
		Value: float64(end.Sub(start)) / float64(time.Millisecond), Tags: tags}
	vu.emitRaw(vu.scratch[:])
	vu.scratch = [2]xk6ext.Sample{}
}

// Call runs an exported function (setup, teardown, handleSummary…) with args converted
// by sobek's ToValue; json.RawMessage arguments are JSON.parse'd in JS. It drives the
// event loop (async functions are awaited) and returns the result exported to Go. __VU
// is 0 during the call, as k6 runs setup and teardown outside any VU. A missing export
// is a *ScriptError.
func (vu *VU) Call(ctx context.Context, name string, args ...any) (any, error) {
	v, err := vu.callExport(ctx, name, args)
	if err != nil {
		return nil, err
	}
	if v == nil || sobek.IsUndefined(v) {
		return nil, nil
	}
	return v.Export(), nil
}

// CallJSON is Call returning JSON.stringify of the result (nil for undefined), the
// round-trip k6 applies to setup data.
func (vu *VU) CallJSON(ctx context.Context, name string, args ...any) (json.RawMessage, error) {
	v, err := vu.callExport(ctx, name, args)
	if err != nil {
		return nil, err
	}
	if v == nil || sobek.IsUndefined(v) {
		return nil, nil
	}
	s, err := vu.jsonStr(sobek.Undefined(), v)
	if err != nil {
		return nil, errorFromJS(err)
	}
	if sobek.IsUndefined(s) {
		return nil, nil
	}
	return json.RawMessage(s.String()), nil
}

func (vu *VU) callExport(ctx context.Context, name string, args []any) (sobek.Value, error) {
	fn, err := vu.function(name)
	if err != nil {
		return nil, err
	}
	jsArgs := make([]sobek.Value, len(args))
	for i, a := range args {
		if raw, ok := a.(json.RawMessage); ok {
			if len(raw) == 0 {
				jsArgs[i] = sobek.Undefined()
				continue
			}
			v, err := vu.jsonPars(sobek.Undefined(), vu.rt.ToValue(string(raw)))
			if err != nil {
				return nil, errorFromJS(err)
			}
			jsArgs[i] = v
			continue
		}
		jsArgs[i] = vu.rt.ToValue(a)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	vu.setContext(cctx)
	vu.inCall = true
	_ = vu.rt.Set("__VU", 0)
	stop := vu.watch(cctx)
	v, err := vu.callResult(cctx, fn, jsArgs...)
	vu.unwatch(stop)
	_ = vu.rt.Set("__VU", vu.id)
	vu.inCall = false
	vu.leave()
	return v, err
}

// --- xk6ext.Host ---

// Runtime implements xk6ext.Host. VU goroutine only.
func (vu *VU) Runtime() *sobek.Runtime { return vu.rt }

// Context implements xk6ext.Host: the init context's, the iteration's or the call's
// context, cancelled when that ends.
// It may be called from any goroutine.
func (vu *VU) Context() context.Context { return vu.ctx.Load().ctx }

// ctxBox lets an interface value be swapped atomically.
type ctxBox struct{ ctx context.Context }

func (vu *VU) setContext(ctx context.Context) { vu.ctx.Store(&ctxBox{ctx: ctx}) }

// RegisterCallback implements xk6ext.Host.
func (vu *VU) RegisterCallback() func(func() error) { return vu.loop.register() }

// NewMetric implements xk6ext.Host: init context only.
func (vu *VU) NewMetric(name string, typ xk6ext.MetricType, vt xk6ext.ValueType) (*xk6ext.Metric, error) {
	if !vu.inInit {
		return nil, fmt.Errorf("declaring metric %q: %w", name, ErrInitOnly)
	}
	return vu.p.reg.NewMetric(name, typ, vt)
}

// Emit implements xk6ext.Host. Goroutine-safe. Samples without tags share the VU's
// current tag map; samples with tags get the VU's tags added to their own map (their tags
// win), which the contract hands over to the host. Zero times become time.Now().
func (vu *VU) Emit(samples ...xk6ext.Sample) {
	if len(samples) == 0 {
		return
	}
	base := *vu.tags.Load()
	var now time.Time
	for i := range samples {
		s := &samples[i]
		if s.Time.IsZero() {
			if now.IsZero() {
				now = time.Now()
			}
			s.Time = now
		}
		if s.Tags == nil {
			s.Tags = base
			continue
		}
		for k, v := range base {
			if _, ok := s.Tags[k]; !ok {
				s.Tags[k] = v
			}
		}
	}
	vu.emitRaw(samples)
}

func (vu *VU) emitRaw(samples []xk6ext.Sample) {
	if vu.p.cfg.Emit != nil {
		vu.p.cfg.Emit(samples)
	}
}

// InInit implements xk6ext.Host.
func (vu *VU) InInit() bool { return vu.inInit }

// Logger implements xk6ext.Host.
func (vu *VU) Logger() *slog.Logger { return vu.p.logger }

// State implements xk6ext.Host.
func (vu *VU) State() xk6ext.State {
	st := xk6ext.State{VUIDInTest: vu.id, Iteration: vu.it.InVU, IterationInRun: vu.it.InScenario}
	if vu.it.Scenario != nil {
		st.Scenario = vu.it.Scenario.Name
	} else {
		st.IterationInRun = -1
	}
	return st
}

// --- tags ---

// publishTags publishes the merged tag map for the current scenario, group and
// exec.vu.tags. Precedence, lowest first: Config.Tags, scenario tags, exec.vu.tags, then
// the system tags scenario and group. Maps are cached per group path, so entering and
// leaving groups in every iteration builds nothing after the first time; changing the
// scenario or exec.vu.tags calls invalidateTags first.
func (vu *VU) publishTags() {
	if c, ok := vu.tagCache[vu.groupPath]; ok {
		vu.tags.Store(&c.tags)
		return
	}
	m := make(map[string]string, len(vu.p.cfg.Tags)+len(vu.userTags)+4)
	for k, v := range vu.p.cfg.Tags {
		m[k] = v
	}
	if vu.scenario != nil {
		for k, v := range vu.scenario.Tags {
			m[k] = v
		}
	}
	for k, v := range vu.userTags {
		m[k] = v
	}
	if vu.scenario != nil {
		m["scenario"] = vu.scenario.Name
	}
	m["group"] = vu.groupPath
	if vu.tagCache == nil {
		vu.tagCache = make(map[string]*groupTags)
	}
	c := &groupTags{tags: m}
	vu.tagCache[vu.groupPath] = c
	vu.tags.Store(&c.tags)
}

// invalidateTags forgets the cached tag maps (their contents changed) and publishes
// fresh ones. Maps already handed to Emit stay untouched.
func (vu *VU) invalidateTags() {
	clear(vu.tagCache)
	vu.publishTags()
}

// groupTags are the published tags of one group path and, per check name, the same tags
// plus check=<name>.
type groupTags struct {
	tags   map[string]string
	checks map[string]map[string]string
}

// checkTags returns the cached tag map for a check named name in the current group.
func (vu *VU) checkTags(name string) map[string]string {
	c := vu.tagCache[vu.groupPath]
	if c == nil {
		vu.publishTags()
		c = vu.tagCache[vu.groupPath]
	}
	if t, ok := c.checks[name]; ok {
		return t
	}
	t := make(map[string]string, len(c.tags)+1)
	for k, v := range c.tags {
		t[k] = v
	}
	t["check"] = name
	if c.checks == nil {
		c.checks = make(map[string]map[string]string)
	}
	c.checks[name] = t
	return t
}

// --- field names ---

// fieldNameMapper shows Go values to JS the way k6 does: a `js:"name"` tag wins,
// otherwise the first letter is lower-cased (MaxTokens → maxTokens); methods are
// lower-cased the same way.
type fieldNameMapper struct{}

func (fieldNameMapper) FieldName(_ reflect.Type, f reflect.StructField) string {
	if tag, ok := f.Tag.Lookup("js"); ok {
		if tag == "-" {
			return ""
		}
		return tag
	}
	return uncap(f.Name)
}

func (fieldNameMapper) MethodName(_ reflect.Type, m reflect.Method) string { return uncap(m.Name) }

func uncap(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError || unicode.IsLower(r) {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}

// parseStack reads sobek's Error.prototype.stack text ("Error: msg\n\tat fn
// (file:line:col(pc))\n…") into a normalised stack and the innermost position.
func parseStack(s string) (stack, file string, line, col int) {
	var b strings.Builder
	for _, ln := range strings.Split(s, "\n") {
		ln = strings.TrimSpace(ln)
		rest, ok := strings.CutPrefix(ln, "at ")
		if !ok {
			continue
		}
		fn, loc := "<anonymous>", rest
		if i := strings.Index(rest, " ("); i >= 0 && strings.HasSuffix(rest, ")") {
			fn, loc = rest[:i], rest[i+2:len(rest)-1]
		}
		if i := strings.LastIndexByte(loc, '('); i > 0 && strings.HasSuffix(loc, ")") {
			loc = loc[:i] // drop sobek's "(pc)"
		}
		f, l, c, ok := splitPosition(loc)
		b.WriteString("\tat ")
		b.WriteString(fn)
		b.WriteString(" (")
		b.WriteString(loc)
		b.WriteString(")\n")
		if ok && file == "" {
			file, line, col = f, l, c
		}
	}
	return b.String(), file, line, col
}

// splitPosition splits "path:line:col" from the right, so paths may contain colons.
func splitPosition(loc string) (file string, line, col int, ok bool) {
	i := strings.LastIndexByte(loc, ':')
	if i <= 0 {
		return "", 0, 0, false
	}
	j := strings.LastIndexByte(loc[:i], ':')
	if j <= 0 {
		return "", 0, 0, false
	}
	l, err1 := atoiPos(loc[j+1 : i])
	c, err2 := atoiPos(loc[i+1:])
	if err1 != nil || err2 != nil {
		return "", 0, 0, false
	}
	return loc[:j], l, c, true
}

func atoiPos(s string) (int, error) {
	if s == "" || len(s) > 9 {
		return 0, errors.New("bad number")
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errors.New("bad number")
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, nil
}

// scenarioT is executor.Scenario, named here for brevity.
type scenarioT = executor.Scenario

// Program returns the Program the VU was created from.
func (vu *VU) Program() *Program { return vu.p }

// PanicError is a Go panic in native module code, caught so that one faulty call fails
// its iteration instead of the whole process.
type PanicError struct {
	Value any
	Stack string // the Go stack of the panic
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic in native code: %v", e.Value) }

// protectErr runs f, turning a Go panic into a *PanicError.
func protectErr(f func() error) (err error) {
	defer func() {
		if x := recover(); x != nil {
			err = &ScriptError{Message: fmt.Sprintf("panic in native code: %v", x), cause: &PanicError{Value: x, Stack: string(debug.Stack())}}
		}
	}()
	return f()
}

func protect(fn sobek.Callable, args []sobek.Value) (v sobek.Value, err error) {
	err = protectErr(func() (e error) {
		v, e = fn(sobek.Undefined(), args...)
		return e
	})
	return v, err
}
