package vm

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"time"

	"github.com/grafana/sobek"

	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// coreExportNames are the named exports of the built-in k6 modules.
var coreExportNames = map[string][]string{
	"k6":           {"check", "fail", "group", "randomSeed", "sleep"},
	"k6/metrics":   {"Counter", "Gauge", "Rate", "Trend"},
	"k6/execution": {"instance", "scenario", "test", "vu"},
	"k6/data":      {"SharedArray"},
}

// coreModule builds the exports of a built-in module for this VU.
func (vu *VU) coreModule(spec string) Exports {
	switch spec {
	case "k6":
		return Exports{Named: map[string]any{
			"check":      vu.check,
			"fail":       vu.fail,
			"group":      vu.group,
			"randomSeed": vu.randomSeed,
			"sleep":      vu.sleep,
		}}
	case "k6/metrics":
		return Exports{Named: map[string]any{
			"Counter": vu.metricConstructor(xk6ext.Counter),
			"Gauge":   vu.metricConstructor(xk6ext.Gauge),
			"Rate":    vu.metricConstructor(xk6ext.Rate),
			"Trend":   vu.metricConstructor(xk6ext.Trend),
		}}
	case "k6/execution":
		return vu.executionModule()
	case "k6/data":
		return Exports{Named: map[string]any{"SharedArray": vu.sharedArrayConstructor}}
	}
	panic("vm: unknown core module " + spec)
}

// check(val, sets, tags) runs every check, emits one `checks` Rate sample per check
// (tags check=<name>, group=<path>, plus the given tags) and returns whether all passed.
func (vu *VU) check(call sobek.FunctionCall) sobek.Value {
	rt := vu.rt
	if vu.inInit {
		panic(rt.NewGoError(fmt.Errorf("check(): %w", ErrNotInInit)))
	}
	val := call.Argument(0)
	sets, ok := call.Argument(1).(*sobek.Object)
	if !ok {
		panic(rt.NewTypeError("check(): the second argument must be an object of checks"))
	}
	var extra map[string]string
	if t, ok := call.Argument(2).(*sobek.Object); ok {
		extra = vu.tagsFromObject(t)
	}
	all := true
	now := time.Now()
	for _, name := range sets.Keys() {
		if strings.Contains(name, "::") {
			panic(rt.NewTypeError("check and group names may not contain '::'"))
		}
		v := sets.Get(name)
		pass := false
		if fn, isFn := sobek.AssertFunction(v); isFn {
			res, err := fn(sobek.Undefined(), val)
			if err != nil {
				panic(err)
			}
			pass = res.ToBoolean()
		} else {
			pass = v.ToBoolean()
		}
		if !pass {
			all = false
		}
		vu.emitCheck(name, pass, now, extra)
	}
	return rt.ToValue(all)
}

// emitCheck emits one checks sample; with no extra tags it reuses a cached tag map per
// group and check name, so a check costs no map.
func (vu *VU) emitCheck(name string, pass bool, now time.Time, extra map[string]string) {
	var tags map[string]string
	if extra == nil {
		tags = vu.checkTags(name)
	} else {
		base := *vu.tags.Load()
		tags = make(map[string]string, len(base)+len(extra)+1)
		for k, v := range base {
			tags[k] = v
		}
		for k, v := range extra {
			tags[k] = v
		}
		tags["check"] = name
	}
	value := 0.0
	if pass {
		value = 1
	}
	vu.scratch[0] = xk6ext.Sample{Metric: vu.p.builtin.checks, Time: now, Value: value, Tags: tags}
	vu.emitRaw(vu.scratch[:1])
	vu.scratch[0] = xk6ext.Sample{}
}

func (vu *VU) tagsFromObject(o *sobek.Object) map[string]string {
	keys := o.Keys()
	if len(keys) == 0 {
		return nil
	}
	m := make(map[string]string, len(keys))
	for _, k := range keys {
		m[k] = o.Get(k).String()
	}
	return m
}

// group(name, fn) runs fn with the group path extended by name, tags samples emitted
// inside with group=<path>, emits group_duration, and returns fn's result.
func (vu *VU) group(call sobek.FunctionCall) sobek.Value {
	rt := vu.rt
	if vu.inInit {
		panic(rt.NewGoError(fmt.Errorf("group(): %w", ErrNotInInit)))
	}
	name := call.Argument(0).String()
	if strings.Contains(name, "::") {
		panic(rt.NewTypeError("check and group names may not contain '::'"))
	}
	fn, ok := sobek.AssertFunction(call.Argument(1))
	if !ok {
		panic(rt.NewTypeError("group(): the second argument must be a function"))
	}
	parent := vu.groupPath
	vu.groupPath = parent + "::" + name
	vu.publishTags()
	tags := *vu.tags.Load()
	start := time.Now()
	res, err := fn(sobek.Undefined())
	end := time.Now()
	vu.groupPath = parent
	vu.publishTags()
	if err != nil {
		panic(err)
	}
	vu.scratch[0] = xk6ext.Sample{Metric: vu.p.builtin.groupDuration, Time: end,
		Value: float64(end.Sub(start)) / float64(time.Millisecond), Tags: tags}
	vu.emitRaw(vu.scratch[:1])
	vu.scratch[0] = xk6ext.Sample{}
	return res
}

// sleep(seconds) blocks the VU, returning early when its context is done.
func (vu *VU) sleep(secs float64) {
	if !(secs > 0) {
		return
	}
	t := time.NewTimer(time.Duration(secs * float64(time.Second)))
	defer t.Stop()
	select {
	case <-t.C:
	case <-vu.Context().Done():
		// Stop the script right here rather than at the watcher's asynchronous interrupt,
		// so no statement after sleep() runs in a cancelled iteration.
		vu.rt.Interrupt(fmt.Errorf("%w: %w", ErrInterrupted, context.Cause(vu.Context())))
	}
}

// fail(msg) throws an Error with msg, failing the iteration.
func (vu *VU) fail(call sobek.FunctionCall) sobek.Value {
	msg := "fail"
	if a := call.Argument(0); !sobek.IsUndefined(a) {
		msg = a.String()
	}
	ctor, _ := sobek.AssertConstructor(vu.rt.Get("Error"))
	o, err := ctor(nil, vu.rt.ToValue(msg))
	if err != nil {
		panic(err)
	}
	panic(o)
}

// randomSeed(n) makes Math.random reproducible in this VU.
func (vu *VU) randomSeed(seed int64) {
	vu.rt.SetRandSource(rand.New(rand.NewSource(seed)).Float64)
}
