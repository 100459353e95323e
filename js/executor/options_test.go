package executor

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

func TestParseScenariosValid(t *testing.T) {
	base := func(name, executor string) Scenario {
		return Scenario{Name: name, Executor: executor, GracefulStop: DefaultGracefulStop, Exec: DefaultExec}
	}
	tests := []struct {
		name string
		json string
		want []Scenario
	}{
		{
			name: "shared-iterations defaults",
			json: `{"a": {"executor": "shared-iterations"}}`,
			want: []Scenario{func() Scenario {
				s := base("a", SharedIterations)
				s.VUs, s.Iterations, s.MaxDuration = 1, 1, 10*time.Minute
				return s
			}()},
		},
		{
			name: "per-vu-iterations with every common field",
			json: `{"b": {"executor": "per-vu-iterations", "vus": 3, "iterations": 7, "maxDuration": "1m30s",
				"startTime": 1500, "gracefulStop": "2s", "exec": "chat", "env": {"K": "v"}, "tags": {"t": "x"}}}`,
			want: []Scenario{func() Scenario {
				s := base("b", PerVUIterations)
				s.VUs, s.Iterations, s.MaxDuration = 3, 7, 90*time.Second
				s.StartTime, s.GracefulStop, s.Exec = 1500*time.Millisecond, 2*time.Second, "chat"
				s.Env, s.Tags = map[string]string{"K": "v"}, map[string]string{"t": "x"}
				return s
			}()},
		},
		{
			name: "constant-vus, null is absent",
			json: `{"c": {"executor": "constant-vus", "duration": "1h", "vus": null}}`,
			want: []Scenario{func() Scenario {
				s := base("c", ConstantVUs)
				s.VUs, s.Duration = 1, time.Hour
				return s
			}()},
		},
		{
			name: "ramping-vus defaults",
			json: `{"r": {"executor": "ramping-vus", "stages": [{"duration": "10s", "target": 5}, {"duration": 0, "target": 0}]}}`,
			want: []Scenario{func() Scenario {
				s := base("r", RampingVUs)
				s.StartVUs, s.GracefulRampDown = 1, 30*time.Second
				s.Stages = []Stage{{10 * time.Second, 5}, {0, 0}}
				return s
			}()},
		},
		{
			name: "constant-arrival-rate: maxVUs defaults to preAllocatedVUs",
			json: `{"car": {"executor": "constant-arrival-rate", "rate": 20, "duration": "1d", "preAllocatedVUs": 4}}`,
			want: []Scenario{func() Scenario {
				s := base("car", ConstantArrivalRate)
				s.Rate, s.Duration, s.PreAllocatedVUs, s.MaxVUs, s.TimeUnit = 20, 24*time.Hour, 4, 4, time.Second
				return s
			}()},
		},
		{
			name: "ramping-arrival-rate, integers written as floats",
			json: `{"rar": {"executor": "ramping-arrival-rate", "startRate": 2.0, "timeUnit": "1m", "preAllocatedVUs": 0,
				"maxVUs": 1e1, "stages": [{"duration": "30s", "target": 60}]}}`,
			want: []Scenario{func() Scenario {
				s := base("rar", RampingArrivalRate)
				s.StartRate, s.TimeUnit, s.PreAllocatedVUs, s.MaxVUs = 2, time.Minute, 0, 10
				s.Stages = []Stage{{30 * time.Second, 60}}
				return s
			}()},
		},
		{
			name: "JSON order is kept",
			json: `{"z": {"executor": "shared-iterations"}, "a": {"executor": "shared-iterations"}}`,
			want: []Scenario{
				func() Scenario {
					s := base("z", SharedIterations)
					s.VUs, s.Iterations, s.MaxDuration = 1, 1, 10*time.Minute
					return s
				}(),
				func() Scenario {
					s := base("a", SharedIterations)
					s.VUs, s.Iterations, s.MaxDuration = 1, 1, 10*time.Minute
					return s
				}(),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseScenarios([]byte(tt.json))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseScenariosInvalid(t *testing.T) {
	tests := []struct{ json, want string }{
		{`[]`, "scenarios: must be an object of named scenarios"},
		{`{}`, "scenarios: must define at least one scenario"},
		{`{"a": {}}`, "scenarios.a.executor: is required"},
		{`{"a": 3}`, "scenarios.a: must be an object"},
		{`{"bad name": {"executor": "constant-vus"}}`, "scenarios.bad name: a scenario name may contain only letters, digits, '_' and '-'"},
		{`{"a": {"executor": "warp"}}`, `scenarios.a.executor: unknown executor "warp"`},
		{`{"a": {"executor": "externally-controlled"}}`, "scenarios.a.executor: the externally-controlled executor is not supported by tokenstorm"},
		{`{"a": {"executor": "constant-vus", "duration": "1s", "rate": 3}}`, "scenarios.a.rate: unknown field for the constant-vus executor"},
		{`{"a": {"executor": "constant-vus", "duration": "1s", "vsu": 3}}`, "scenarios.a.vsu: unknown field for the constant-vus executor"},
		{`{"a": {"executor": "constant-vus", "duration": "1s", "options": {}}}`, "scenarios.a.options: scenario options (browser) are not supported by tokenstorm"},
		{`{"a": {"executor": "constant-vus"}}`, "scenarios.a.duration: is required"},
		{`{"a": {"executor": "constant-vus", "duration": "1s", "vus": 0}}`, "scenarios.a.vus: must be greater than 0"},
		{`{"a": {"executor": "constant-vus", "duration": "1s", "vus": 1.5}}`, "scenarios.a.vus: must be an integer"},
		{`{"a": {"executor": "constant-vus", "duration": "10"}}`, `scenarios.a.duration: invalid duration "10" (use a number of milliseconds or a string like "30s", "1m30s", "1d")`},
		{`{"a": {"executor": "constant-vus", "duration": true}}`, `scenarios.a.duration: must be a duration: a number of milliseconds or a string like "30s"`},
		{`{"a": {"executor": "constant-vus", "duration": "0s"}}`, "scenarios.a.duration: must be greater than 0"},
		{`{"a": {"executor": "constant-vus", "duration": "1s", "gracefulStop": "-1s"}}`, "scenarios.a.gracefulStop: must not be negative"},
		{`{"a": {"executor": "constant-vus", "duration": "1s", "startTime": -5}}`, "scenarios.a.startTime: must not be negative"},
		{`{"a": {"executor": "constant-vus", "duration": "1s", "exec": 3}}`, "scenarios.a.exec: must be a string"},
		{`{"a": {"executor": "constant-vus", "duration": "1s", "exec": ""}}`, "scenarios.a.exec: must not be empty"},
		{`{"a": {"executor": "constant-vus", "duration": "1s", "env": {"K": 1}}}`, "scenarios.a.env.K: must be a string"},
		{`{"a": {"executor": "constant-vus", "duration": "1s", "tags": []}}`, "scenarios.a.tags: must be an object of strings"},
		{`{"a": {"executor": "shared-iterations", "vus": 5, "iterations": 4}}`, "scenarios.a.iterations: must not be less than vus (5), as every VU needs an iteration"},
		{`{"a": {"executor": "per-vu-iterations", "iterations": 0}}`, "scenarios.a.iterations: must be greater than 0"},
		{`{"a": {"executor": "per-vu-iterations", "maxDuration": "0s"}}`, "scenarios.a.maxDuration: must be greater than 0"},
		{`{"a": {"executor": "ramping-vus"}}`, "scenarios.a.stages: is required"},
		{`{"a": {"executor": "ramping-vus", "stages": []}}`, "scenarios.a.stages: must have at least one stage"},
		{`{"a": {"executor": "ramping-vus", "stages": [{"duration": "1s", "target": 1}, {"duration": "1s", "target": -1}]}}`, "scenarios.a.stages[1].target: must not be negative"},
		{`{"a": {"executor": "ramping-vus", "stages": [{"duration": "1s"}]}}`, "scenarios.a.stages[0].target: is required"},
		{`{"a": {"executor": "ramping-vus", "stages": [{"target": 1}]}}`, "scenarios.a.stages[0].duration: is required"},
		{`{"a": {"executor": "ramping-vus", "stages": [{"duration": "1s", "target": 1, "x": 1}]}}`, "scenarios.a.stages[0].x: unknown field of a stage"},
		{`{"a": {"executor": "ramping-vus", "stages": [{"duration": "0s", "target": 1}]}}`, "scenarios.a.stages: must last longer than 0s in total"},
		{`{"a": {"executor": "ramping-vus", "startVUs": 0, "stages": [{"duration": "1s", "target": 0}]}}`, "scenarios.a.stages: must reach at least 1 VU"},
		{`{"a": {"executor": "ramping-vus", "gracefulRampDown": "-1s", "stages": [{"duration": "1s", "target": 1}]}}`, "scenarios.a.gracefulRampDown: must not be negative"},
		{`{"chat": {"executor": "constant-arrival-rate", "rate": 0, "duration": "1s", "preAllocatedVUs": 1}}`, "scenarios.chat.rate: must be greater than 0"},
		{`{"chat": {"executor": "constant-arrival-rate", "duration": "1s", "preAllocatedVUs": 1}}`, "scenarios.chat.rate: is required"},
		{`{"chat": {"executor": "constant-arrival-rate", "rate": 1, "duration": "1s"}}`, "scenarios.chat.preAllocatedVUs: is required"},
		{`{"chat": {"executor": "constant-arrival-rate", "rate": 1, "duration": "1s", "preAllocatedVUs": 5, "maxVUs": 2}}`, "scenarios.chat.maxVUs: must not be less than preAllocatedVUs (5)"},
		{`{"chat": {"executor": "constant-arrival-rate", "rate": 1, "duration": "1s", "preAllocatedVUs": 0}}`, "scenarios.chat.maxVUs: must be greater than 0 (or set preAllocatedVUs)"},
		{`{"chat": {"executor": "constant-arrival-rate", "rate": 1, "duration": "1s", "preAllocatedVUs": 1, "timeUnit": "0s"}}`, "scenarios.chat.timeUnit: must be greater than 0"},
		{`{"chat": {"executor": "ramping-arrival-rate", "startRate": -1, "preAllocatedVUs": 1, "stages": [{"duration": "1s", "target": 1}]}}`, "scenarios.chat.startRate: must not be negative"},
		{`{"a": {"executor": "shared-iterations"}, "a": {"executor": "shared-iterations"}}`, "scenarios.a: defined twice"},
		{`{"a": {"executor": "shared-iterations"}} x`, "scenarios: invalid JSON: trailing data"},
		{`{"a": {"executor": "constant-vus", "duration": "1s", "vus": "10"}}`, "scenarios.a.vus: must be an integer, not a string"},
		{`{"a": {"executor": "constant-vus", "duration": "1s", "vus": 10000001}}`, "scenarios.a.vus: must be at most 10000000"},
		{`{"a": {"executor": "ramping-vus", "stages": [{"duration": "1s", "target": 1e8}]}}`, "scenarios.a.stages: targets must be at most 10000000 VUs"},
		{`{"a": {"executor": "per-vu-iterations", "vus": 1000, "iterations": 9223372036854776}}`, "scenarios.a.iterations: vus × iterations is too large"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			_, err := ParseScenarios([]byte(tt.json))
			require.Error(t, err)
			var oe *OptionError
			require.True(t, errors.As(err, &oe), "want *OptionError, got %T", err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

func TestFromShortcuts(t *testing.T) {
	def := func(executor string) Scenario {
		return Scenario{Name: "default", Executor: executor, GracefulStop: 30 * time.Second, Exec: "default"}
	}
	tests := []struct {
		name string
		in   Shortcuts
		want Scenario
		err  string
	}{
		{name: "nothing: 1 iteration of 1 VU", want: func() Scenario {
			s := def(PerVUIterations)
			s.VUs, s.Iterations, s.MaxDuration = 1, 1, 10*time.Minute
			return s
		}()},
		{name: "vus only: 1 iteration for each VU", in: Shortcuts{VUs: ptr[int64](4)}, want: func() Scenario {
			s := def(PerVUIterations)
			s.VUs, s.Iterations, s.MaxDuration = 4, 1, 10*time.Minute
			return s
		}()},
		{name: "iterations", in: Shortcuts{Iterations: ptr[int64](10)}, want: func() Scenario {
			s := def(SharedIterations)
			s.VUs, s.Iterations, s.MaxDuration = 1, 10, 10*time.Minute
			return s
		}()},
		{name: "iterations and duration: duration is maxDuration", in: Shortcuts{VUs: ptr[int64](2), Iterations: ptr[int64](10), Duration: ptr(5 * time.Second)}, want: func() Scenario {
			s := def(SharedIterations)
			s.VUs, s.Iterations, s.MaxDuration = 2, 10, 5*time.Second
			return s
		}()},
		{name: "duration", in: Shortcuts{VUs: ptr[int64](3), Duration: ptr(time.Minute)}, want: func() Scenario {
			s := def(ConstantVUs)
			s.VUs, s.Duration = 3, time.Minute
			return s
		}()},
		{name: "stages", in: Shortcuts{Stages: []Stage{{time.Second, 5}}}, want: func() Scenario {
			s := def(RampingVUs)
			s.StartVUs, s.GracefulRampDown, s.Stages = 1, 30*time.Second, []Stage{{time.Second, 5}}
			return s
		}()},
		{name: "iterations and stages", in: Shortcuts{Iterations: ptr[int64](1), Stages: []Stage{{time.Second, 5}}}, err: "stages: using the execution shortcuts iterations and stages together is not allowed"},
		{name: "duration and stages", in: Shortcuts{Duration: ptr(time.Second), Stages: []Stage{{time.Second, 5}}}, err: "stages: using the execution shortcuts duration and stages together is not allowed"},
		{name: "zero duration", in: Shortcuts{Duration: ptr(time.Duration(0))}, err: "duration: must be greater than 0"},
		{name: "zero vus", in: Shortcuts{VUs: ptr[int64](0), Duration: ptr(time.Second)}, err: "vus: must be greater than 0"},
		{name: "iterations below vus", in: Shortcuts{VUs: ptr[int64](3), Iterations: ptr[int64](2)}, err: "iterations: must not be less than vus (3), as every VU needs an iteration"},
		{name: "zero maxDuration is reported as duration", in: Shortcuts{Iterations: ptr[int64](2), Duration: ptr(time.Duration(0))}, err: "duration: must be greater than 0"},
		{name: "negative stage target", in: Shortcuts{Stages: []Stage{{time.Second, -1}}}, err: "stages[0].target: must not be negative"},
		{name: "negative start vus is reported as vus", in: Shortcuts{VUs: ptr[int64](-1), Stages: []Stage{{time.Second, 1}}}, err: "vus: must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromShortcuts(tt.in)
			if tt.err != "" {
				var oe *OptionError
				require.ErrorAs(t, err, &oe)
				assert.Equal(t, tt.err, err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []Scenario{tt.want}, got)
		})
	}
}

func TestResolve(t *testing.T) {
	scripted := []Scenario{{Name: "s", Executor: ConstantVUs, VUs: 2, Duration: time.Second, GracefulStop: time.Second, Exec: "x"}}
	tests := []struct {
		name      string
		script    Shortcuts
		scenarios []Scenario
		cli       Shortcuts
		executor  string // of the single resulting scenario
		scName    string
		err       string
	}{
		{name: "script scenarios run as written", scenarios: scripted, executor: ConstantVUs, scName: "s"},
		{name: "-u alone keeps scenarios", scenarios: scripted, cli: Shortcuts{VUs: ptr[int64](9)}, executor: ConstantVUs, scName: "s"},
		{name: "-d replaces scenarios", scenarios: scripted, cli: Shortcuts{Duration: ptr(time.Second)}, executor: ConstantVUs, scName: "default"},
		{name: "-i replaces scenarios", scenarios: scripted, cli: Shortcuts{Iterations: ptr[int64](3)}, executor: SharedIterations, scName: "default"},
		{name: "script vus beside scenarios is ignored", script: Shortcuts{VUs: ptr[int64](3)}, scenarios: scripted, executor: ConstantVUs, scName: "s"},
		{name: "script duration beside scenarios", script: Shortcuts{Duration: ptr(time.Second)}, scenarios: scripted, err: "duration: using an execution shortcut and scenarios simultaneously is not allowed"},
		{name: "script iterations beside scenarios", script: Shortcuts{Iterations: ptr[int64](1)}, scenarios: scripted, err: "iterations: using an execution shortcut and scenarios simultaneously is not allowed"},
		{name: "cli -i with script duration: maxDuration", script: Shortcuts{Duration: ptr(time.Minute)}, cli: Shortcuts{Iterations: ptr[int64](5)}, executor: SharedIterations, scName: "default"},
		{name: "cli -d overrides script duration", script: Shortcuts{Duration: ptr(time.Minute)}, cli: Shortcuts{Duration: ptr(time.Second)}, executor: ConstantVUs, scName: "default"},
		// k6's tiers: a tier that sets duration, iterations or stages resets all of them
		// (and the scenarios) from the tiers below, before validation.
		{name: "cli -i over script stages", script: Shortcuts{Stages: []Stage{{time.Minute, 5}}}, cli: Shortcuts{Iterations: ptr[int64](3)}, executor: SharedIterations, scName: "default"},
		{name: "cli -s over script iterations", script: Shortcuts{Iterations: ptr[int64](3)}, cli: Shortcuts{Stages: []Stage{{time.Second, 2}}}, executor: RampingVUs, scName: "default"},
		{name: "cli -d over script duration beside scenarios", script: Shortcuts{Duration: ptr(time.Second)}, scenarios: scripted, cli: Shortcuts{Duration: ptr(time.Second)}, executor: ConstantVUs, scName: "default"},
		{name: "cli -i with -s in one tier", cli: Shortcuts{Iterations: ptr[int64](3), Stages: []Stage{{time.Second, 2}}}, err: "stages: using the execution shortcuts iterations and stages together is not allowed"},
		{name: "nothing anywhere", executor: PerVUIterations, scName: "default"},
		{name: "empty scenarios", scenarios: []Scenario{}, err: "scenarios: must define at least one scenario"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.script, tt.scenarios, tt.cli)
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Len(t, got, 1)
			assert.Equal(t, tt.executor, got[0].Executor)
			assert.Equal(t, tt.scName, got[0].Name)
		})
	}
	t.Run("cli -d overrides script duration: value", func(t *testing.T) {
		got, err := Resolve(Shortcuts{VUs: ptr[int64](4), Duration: ptr(time.Minute)}, nil, Shortcuts{Duration: ptr(time.Second)})
		require.NoError(t, err)
		assert.Equal(t, time.Second, got[0].Duration)
		assert.Equal(t, int64(4), got[0].VUs, "script vus still applies")
	})
	t.Run("cli -i resets script duration: value", func(t *testing.T) {
		got, err := Resolve(Shortcuts{VUs: ptr[int64](2), Duration: ptr(time.Minute)}, nil, Shortcuts{Iterations: ptr[int64](5)})
		require.NoError(t, err)
		assert.Equal(t, DefaultMaxDuration, got[0].MaxDuration, "the script's duration is not kept as maxDuration")
		assert.Equal(t, int64(5), got[0].Iterations)
		assert.Equal(t, int64(2), got[0].VUs, "vus carries over")
	})
	t.Run("script iterations with duration: maxDuration", func(t *testing.T) {
		got, err := Resolve(Shortcuts{Duration: ptr(time.Minute), Iterations: ptr[int64](5)}, nil, Shortcuts{})
		require.NoError(t, err)
		assert.Equal(t, time.Minute, got[0].MaxDuration, "both in one tier: duration bounds the iterations")
	})
	t.Run("cli -u over script vus", func(t *testing.T) {
		got, err := Resolve(Shortcuts{VUs: ptr[int64](2), Iterations: ptr[int64](6)}, nil, Shortcuts{VUs: ptr[int64](3)})
		require.NoError(t, err)
		assert.Equal(t, int64(3), got[0].VUs)
		assert.Equal(t, int64(6), got[0].Iterations, "-u alone keeps the script's iterations")
	})
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{in: "30s", want: 30 * time.Second},
		{in: "1m30s", want: 90 * time.Second},
		{in: "500ms", want: 500 * time.Millisecond},
		{in: "1h", want: time.Hour},
		{in: "0", want: 0},
		{in: "1d", want: 24 * time.Hour},
		{in: "2d12h", want: 60 * time.Hour},
		{in: "1.5d", want: 36 * time.Hour},
		{in: "-1d2h", want: -26 * time.Hour},
		{in: "", err: true},
		{in: "10", err: true},
		{in: "d", err: true},
		{in: "1d-2h", err: true},
		{in: "1dx", err: true},
		{in: "infd", err: true},
		{in: "1e3d", err: true},
		{in: "999999999999d", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDuration(tt.in)
			if tt.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func FuzzParseScenarios(f *testing.F) {
	for _, s := range []string{
		`{"a": {"executor": "shared-iterations", "vus": 2, "iterations": 5}}`,
		`{"b": {"executor": "ramping-arrival-rate", "preAllocatedVUs": 1, "stages": [{"duration": "1s", "target": 3}]}}`,
		`{"c": {"executor": "constant-vus", "duration": 1500, "env": {"a": "b"}}}`,
		`{"d": {"executor": "ramping-vus", "stages": [{"duration": "1d", "target": 1e2}]}}`,
		`{"e": null}`, `{`, `[1]`, `{"x": {"executor": 5}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		scs, err := ParseScenarios(raw)
		if err != nil {
			var oe *OptionError
			if !errors.As(err, &oe) {
				t.Fatalf("error is %T, not *OptionError: %v", err, err)
			}
			return
		}
		// Whatever parses must be accepted by NewRun and plan without panicking.
		r, err := NewRun(scs, &fakePool{}, Hooks{})
		if err != nil {
			t.Fatalf("parsed scenarios rejected by NewRun: %v", err)
		}
		if r.MaxVUs() < r.PlannedVUs() {
			t.Fatalf("MaxVUs %d < PlannedVUs %d", r.MaxVUs(), r.PlannedVUs())
		}
		_ = TotalDuration(scs)
	})
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30s", "1m30s", "1d", "2d3h", "1.5d", "-1d", "d", "1d1d", "0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		// Anything without a day unit must agree with Go's parser.
		if g, gerr := time.ParseDuration(s); gerr == nil && g != d {
			t.Fatalf("ParseDuration(%q) = %v, time.ParseDuration = %v", s, d, g)
		}
	})
}
