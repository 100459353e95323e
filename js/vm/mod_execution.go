package vm

import (
	"fmt"
	"time"

	"github.com/grafana/sobek"
)

// executionModule is k6/execution: vu, scenario, test and instance, read live from the
// VU's state through getters.
func (vu *VU) executionModule() Exports {
	rt := vu.rt
	getter := func(o *sobek.Object, name string, fn func() any) {
		_ = o.DefineAccessorProperty(name, rt.ToValue(func(sobek.FunctionCall) sobek.Value {
			return rt.ToValue(fn())
		}), nil, sobek.FLAG_FALSE, sobek.FLAG_TRUE)
	}
	needIteration := func(what string) {
		if vu.inInit || vu.inCall || vu.it.Scenario == nil {
			panic(rt.NewGoError(fmt.Errorf("exec.%s is only available inside an iteration", what)))
		}
	}

	vuObj := rt.NewObject()
	getter(vuObj, "idInTest", func() any { return vu.id })
	getter(vuObj, "idInInstance", func() any { return vu.id })
	getter(vuObj, "iterationInInstance", func() any { needIteration("vu.iterationInInstance"); return vu.iterInRun })
	getter(vuObj, "iterationInScenario", func() any { needIteration("vu.iterationInScenario"); return vu.it.InVU })
	tagsObj := rt.NewDynamicObject(&vuTags{vu: vu})
	_ = vuObj.DefineDataProperty("tags", tagsObj, sobek.FLAG_FALSE, sobek.FLAG_FALSE, sobek.FLAG_TRUE)
	metricsObj := rt.NewObject()
	_ = metricsObj.DefineDataProperty("tags", tagsObj, sobek.FLAG_FALSE, sobek.FLAG_FALSE, sobek.FLAG_TRUE)
	_ = vuObj.DefineDataProperty("metrics", metricsObj, sobek.FLAG_FALSE, sobek.FLAG_FALSE, sobek.FLAG_TRUE)

	scObj := rt.NewObject()
	getter(scObj, "name", func() any { needIteration("scenario.name"); return vu.it.Scenario.Name })
	getter(scObj, "executor", func() any { needIteration("scenario.executor"); return vu.it.Scenario.Executor })
	getter(scObj, "iterationInTest", func() any { needIteration("scenario.iterationInTest"); return vu.it.InScenario })
	getter(scObj, "iterationInInstance", func() any {
		needIteration("scenario.iterationInInstance")
		return vu.it.InScenario
	})
	getter(scObj, "startTime", func() any {
		needIteration("scenario.startTime")
		return vu.p.scenarioStart(vu.it.Scenario.Name, vu.started).UnixMilli()
	})
	getter(scObj, "progress", func() any {
		needIteration("scenario.progress")
		if vu.p.cfg.ScenarioInfo == nil {
			panic(rt.NewGoError(fmt.Errorf("exec.scenario.progress is not supported by this runner")))
		}
		_, p := vu.p.cfg.ScenarioInfo(vu.it.Scenario.Name)
		return p
	})

	testObj := rt.NewObject()
	_ = testObj.Set("abort", func(call sobek.FunctionCall) sobek.Value {
		reason := ""
		if a := call.Argument(0); !sobek.IsUndefined(a) {
			reason = a.String()
		}
		if vu.p.cfg.Abort != nil {
			vu.p.cfg.Abort(reason)
		}
		// An interrupt cannot be caught by try/catch, so the script stops here, as k6's.
		rt.Interrupt(&AbortError{Reason: reason})
		return sobek.Undefined()
	})
	getter(testObj, "options", func() any {
		v, err := vu.jsonPars(sobek.Undefined(), rt.ToValue(string(vu.optionsOrEmpty())))
		if err != nil {
			panic(err)
		}
		return v
	})

	instObj := rt.NewObject()
	instance := func(name string) InstanceInfo {
		if vu.p.cfg.Instance == nil {
			panic(rt.NewGoError(fmt.Errorf("exec.instance.%s is not supported by this runner", name)))
		}
		return vu.p.cfg.Instance()
	}
	getter(instObj, "iterationsInterrupted", func() any { return instance("iterationsInterrupted").IterationsInterrupted })
	getter(instObj, "iterationsCompleted", func() any { return instance("iterationsCompleted").IterationsCompleted })
	getter(instObj, "vusActive", func() any { return instance("vusActive").VUsActive })
	getter(instObj, "vusInitialized", func() any { return instance("vusInitialized").VUsInitialized })
	getter(instObj, "currentTestRunDuration", func() any {
		d := instance("currentTestRunDuration").CurrentTestRunDuration
		return float64(d) / float64(time.Millisecond)
	})

	return Exports{Named: map[string]any{
		"vu": vuObj, "scenario": scObj, "test": testObj, "instance": instObj,
	}}
}

func (vu *VU) optionsOrEmpty() []byte {
	if len(vu.options) == 0 {
		return []byte("{}")
	}
	return vu.options
}

// vuTags is exec.vu.tags (and exec.vu.metrics.tags): tags set here are added to every
// sample the VU emits afterwards, as in k6. Values are stored as strings.
type vuTags struct{ vu *VU }

func (t *vuTags) Get(key string) sobek.Value {
	tags := *t.vu.tags.Load()
	if v, ok := tags[key]; ok {
		return t.vu.rt.ToValue(v)
	}
	return nil
}

func (t *vuTags) Set(key string, val sobek.Value) bool {
	if _, isObj := val.(*sobek.Object); isObj {
		panic(t.vu.rt.NewTypeError(fmt.Sprintf("exec.vu.tags: the value of %q must be a string, number or boolean", key)))
	}
	if t.vu.userTags == nil {
		t.vu.userTags = make(map[string]string)
	}
	t.vu.userTags[key] = val.String()
	t.vu.invalidateTags()
	return true
}

func (t *vuTags) Has(key string) bool {
	_, ok := (*t.vu.tags.Load())[key]
	return ok
}

func (t *vuTags) Delete(key string) bool {
	delete(t.vu.userTags, key)
	t.vu.invalidateTags()
	return true
}

func (t *vuTags) Keys() []string {
	tags := *t.vu.tags.Load()
	out := make([]string, 0, len(tags))
	for k := range tags {
		out = append(out, k)
	}
	return out
}
