package vm

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/grafana/sobek"
)

// installGlobals sets up what k6 offers every script without an import: __ENV, __VU,
// __ITER, console, open, and the timer functions.
func (vu *VU) installGlobals() error {
	rt := vu.rt
	js := rt.Get("JSON").ToObject(rt)
	var ok bool
	if vu.jsonStr, ok = sobek.AssertFunction(js.Get("stringify")); !ok {
		return fmt.Errorf("vm: JSON.stringify missing")
	}
	if vu.jsonPars, ok = sobek.AssertFunction(js.Get("parse")); !ok {
		return fmt.Errorf("vm: JSON.parse missing")
	}
	freeze, err := rt.RunString(`(function deepFreeze(o) {
		if (o !== null && typeof o === "object" && !Object.isFrozen(o)) {
			Object.freeze(o);
			for (const k of Object.keys(o)) deepFreeze(o[k]);
		}
		return o;
	})`)
	if err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	vu.freeze, _ = sobek.AssertFunction(freeze)

	env := rt.NewObject()
	for k, v := range vu.p.cfg.Env {
		_ = env.Set(k, v)
	}
	vu.baseEnv = env
	set := func(name string, v any) {
		if err == nil {
			err = rt.Set(name, v)
		}
	}
	set("__ENV", env)
	set("__VU", vu.id)
	set("__ITER", 0)
	set("console", vu.console())
	set("open", vu.open)
	set("setTimeout", vu.setTimeout)
	set("clearTimeout", vu.clearTimeout)
	set("setInterval", vu.setInterval)
	set("clearInterval", vu.clearTimeout)
	if err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	return nil
}

// setEnvFor makes __ENV the run's env overlaid with the scenario's env (k6 semantics),
// building each scenario's object once per VU.
func (vu *VU) setEnvFor(sc *scenarioT) {
	if sc == nil || len(sc.Env) == 0 {
		_ = vu.rt.Set("__ENV", vu.baseEnv)
		return
	}
	if vu.scenarioEnv == nil {
		vu.scenarioEnv = make(map[*scenarioT]sobek.Value)
	}
	env, ok := vu.scenarioEnv[sc]
	if !ok {
		o := vu.rt.NewObject()
		for k, v := range vu.p.cfg.Env {
			_ = o.Set(k, v)
		}
		for k, v := range sc.Env {
			_ = o.Set(k, v)
		}
		env = o
		vu.scenarioEnv[sc] = env
	}
	_ = vu.rt.Set("__ENV", env)
}

// console maps console.* to the logger with k6's levels (log is info).
func (vu *VU) console() *sobek.Object {
	o := vu.rt.NewObject()
	mk := func(level slog.Level) func(sobek.FunctionCall) sobek.Value {
		return func(call sobek.FunctionCall) sobek.Value {
			l := vu.p.logger
			if !l.Enabled(vu.Context(), level) {
				return sobek.Undefined()
			}
			l.Log(vu.Context(), level, vu.formatArgs(call.Arguments), slog.String("source", "console"))
			return sobek.Undefined()
		}
	}
	_ = o.Set("log", mk(slog.LevelInfo))
	_ = o.Set("info", mk(slog.LevelInfo))
	_ = o.Set("debug", mk(slog.LevelDebug))
	_ = o.Set("warn", mk(slog.LevelWarn))
	_ = o.Set("error", mk(slog.LevelError))
	return o
}

// formatArgs renders console arguments as k6 does: strings as they are, Error objects
// by their message, other objects as JSON, all joined by spaces.
func (vu *VU) formatArgs(args []sobek.Value) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vu.formatValue(a))
	}
	return b.String()
}

func (vu *VU) formatValue(v sobek.Value) string {
	o, ok := v.(*sobek.Object)
	if !ok {
		if v == nil {
			return "undefined"
		}
		return v.String()
	}
	if _, isFn := sobek.AssertFunction(v); isFn {
		return v.String()
	}
	if msg := o.Get("message"); msg != nil && o.Get("stack") != nil {
		return jsErrorMessage(v)
	}
	s, err := vu.jsonStr(sobek.Undefined(), v)
	if err != nil || sobek.IsUndefined(s) {
		return v.String()
	}
	return s.String()
}

// open reads a file in the init context, relative to the module that calls it; mode "b"
// returns an ArrayBuffer, anything else but "" or "r" is an error.
func (vu *VU) open(call sobek.FunctionCall) sobek.Value {
	rt := vu.rt
	if !vu.inInit {
		panic(rt.NewGoError(fmt.Errorf("open(): %w", ErrInitOnly)))
	}
	name := call.Argument(0)
	if sobek.IsUndefined(name) || sobek.IsNull(name) || name.String() == "" {
		panic(rt.NewTypeError("open(): a file path is required"))
	}
	mode := ""
	if m := call.Argument(1); !sobek.IsUndefined(m) {
		mode = m.String()
	}
	if mode != "" && mode != "r" && mode != "b" {
		panic(rt.NewTypeError(fmt.Sprintf("open(): unknown mode %q (use \"b\" for binary)", mode)))
	}
	path, err := resolvePath(vu.callerDir(), name.String())
	if err != nil {
		panic(rt.NewGoError(fmt.Errorf("open(): %w", err)))
	}
	data, err := vu.p.readFile(path)
	if err != nil {
		panic(rt.NewGoError(fmt.Errorf("open(): %w", err)))
	}
	if mode == "b" {
		return rt.ToValue(rt.NewArrayBuffer(append([]byte(nil), data...)))
	}
	return rt.ToValue(string(data))
}

// callerDir is the directory of the innermost JS frame's module.
func (vu *VU) callerDir() string {
	for _, f := range vu.rt.CaptureCallStack(8, nil) {
		if p := f.Position(); p.Filename != "" && filepath.IsAbs(p.Filename) {
			return filepath.Dir(p.Filename)
		}
	}
	return filepath.Dir(vu.p.path)
}

// --- timers (k6 offers setTimeout and friends as globals) ---

type jsTimer struct {
	t        *time.Timer
	enqueue  func(func() error)
	interval bool
}

func (vu *VU) setTimeout(call sobek.FunctionCall) sobek.Value {
	return vu.addTimer(call, false)
}

func (vu *VU) setInterval(call sobek.FunctionCall) sobek.Value {
	return vu.addTimer(call, true)
}

func (vu *VU) addTimer(call sobek.FunctionCall, interval bool) sobek.Value {
	fn, ok := sobek.AssertFunction(call.Argument(0))
	if !ok {
		panic(vu.rt.NewTypeError("setTimeout: the first argument must be a function"))
	}
	ms := call.Argument(1).ToFloat()
	if ms != ms || ms < 0 {
		ms = 0
	}
	d := time.Duration(ms * float64(time.Millisecond))
	if interval && d <= 0 {
		d = time.Millisecond
	}
	var args []sobek.Value
	if len(call.Arguments) > 2 {
		args = append(args, call.Arguments[2:]...)
	}
	if vu.timers == nil {
		vu.timers = make(map[int64]*jsTimer)
	}
	vu.nextTimer++
	id := vu.nextTimer
	jt := &jsTimer{interval: interval}
	vu.timers[id] = jt
	var arm func()
	arm = func() {
		jt.enqueue = vu.loop.register()
		enqueue := jt.enqueue
		jt.t = time.AfterFunc(d, func() {
			enqueue(func() error {
				if _, live := vu.timers[id]; !live {
					return nil
				}
				if !jt.interval {
					delete(vu.timers, id)
				} else {
					arm()
				}
				_, err := fn(sobek.Undefined(), args...)
				return err
			})
		})
	}
	arm()
	return vu.rt.ToValue(id)
}

func (vu *VU) clearTimeout(call sobek.FunctionCall) sobek.Value {
	id := call.Argument(0).ToInteger()
	if jt, ok := vu.timers[id]; ok {
		delete(vu.timers, id)
		if jt.t.Stop() {
			jt.enqueue(func() error { return nil }) // release the loop slot
		}
	}
	return sobek.Undefined()
}

// stopTimers cancels every timer at the end of an iteration or call; their slots go
// with the event loop's generation.
func (vu *VU) stopTimers() {
	for id, jt := range vu.timers {
		jt.t.Stop()
		delete(vu.timers, id)
	}
}
