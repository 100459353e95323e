package xk6ext

import "github.com/grafana/sobek"

// Placeholders until llm.Client, tokens and mockllm land; replaced in the next commits.

type metricSet struct{}

func declareMetrics(Host) (*metricSet, error) { return &metricSet{}, nil }

type mockState struct{}

func (r *RootModule) closeMock() error { return nil }

func (m *ModuleInstance) addClient(*sobek.Object) {}
func (m *ModuleInstance) addMock(*sobek.Object)   {}
