package vm_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/js/executor"
)

func TestBasicLifecycle(t *testing.T) {
	e := newEnv(t)
	p := e.compile("basic.js")
	vu, err := p.NewVU(context.Background(), 3)
	require.NoError(t, err)

	opts, err := vu.Options()
	require.NoError(t, err)
	var o map[string]any
	require.NoError(t, json.Unmarshal(opts, &o))
	assert.EqualValues(t, 2, o["vus"])
	assert.Equal(t, []string{"default", "setup", "teardown"}, vu.Exports())

	data, err := vu.CallJSON(context.Background(), "setup")
	require.NoError(t, err)
	assert.JSONEq(t, `{"token":"abc","vu":0}`, string(data))
	vu.SetSetupData(data)

	sc := scenario("default")
	for i := int64(0); i < 2; i++ {
		require.NoError(t, vu.RunIteration(context.Background(), executor.Iteration{Scenario: sc, InVU: i, InScenario: i}))
	}
	_, err = vu.Call(context.Background(), "teardown", json.RawMessage(data))
	require.NoError(t, err)
	assert.Equal(t, []any{"init 3 lib", int64(0), int64(2), "teardown abc"}, e.probe.recorded())
	assert.Len(t, e.sink.named("checks"), 4)
	assert.Len(t, e.sink.named("iterations"), 2)
}
