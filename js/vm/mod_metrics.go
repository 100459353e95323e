package vm

import (
	"fmt"
	"math"
	"time"

	"github.com/grafana/sobek"

	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// metricConstructor is k6/metrics' Counter, Gauge, Rate or Trend: `new Trend(name,
// isTime)`, init context only; instances have add(value, tags) and name.
func (vu *VU) metricConstructor(typ xk6ext.MetricType) func(sobek.ConstructorCall) *sobek.Object {
	return func(call sobek.ConstructorCall) *sobek.Object {
		rt := vu.rt
		if !vu.inInit {
			panic(rt.NewGoError(fmt.Errorf("metrics must be declared in the init context: %w", ErrInitOnly)))
		}
		nameV := call.Argument(0)
		if sobek.IsUndefined(nameV) || nameV.String() == "" {
			panic(rt.NewTypeError("a metric needs a name"))
		}
		vt := xk6ext.Default
		if typ != xk6ext.Rate && call.Argument(1).ToBoolean() {
			vt = xk6ext.Time
		}
		m, err := vu.p.reg.NewMetric(nameV.String(), typ, vt)
		if err != nil {
			panic(rt.NewGoError(err))
		}
		o := call.This
		_ = o.DefineDataProperty("name", rt.ToValue(m.Name), sobek.FLAG_FALSE, sobek.FLAG_FALSE, sobek.FLAG_TRUE)
		_ = o.Set("add", func(c sobek.FunctionCall) sobek.Value {
			vu.addMetric(m, c.Argument(0), c.Argument(1))
			return rt.ToValue(true)
		})
		return nil // use call.This, so `instanceof Trend` holds
	}
}

func (vu *VU) addMetric(m *xk6ext.Metric, value, tags sobek.Value) {
	rt := vu.rt
	if vu.inInit {
		panic(rt.NewGoError(fmt.Errorf("%s.add(): %w", m.Name, ErrNotInInit)))
	}
	var v float64
	switch {
	case m.Type == xk6ext.Rate:
		f := value.ToFloat()
		if value.ToBoolean() && !math.IsNaN(f) || value.ExportType() != nil && value.ToBoolean() && isBoolLike(value) {
			v = 1
		}
	default:
		v = value.ToFloat()
		if math.IsNaN(v) || math.IsInf(v, 0) {
			panic(rt.NewTypeError(fmt.Sprintf("%s.add(): %s is not a number", m.Name, value.String())))
		}
	}
	s := xk6ext.Sample{Metric: m, Time: time.Now(), Value: v}
	if t, ok := tags.(*sobek.Object); ok {
		s.Tags = vu.tagsFromObject(t)
	}
	vu.scratch[0] = s
	vu.Emit(vu.scratch[:1]...)
	vu.scratch[0] = xk6ext.Sample{}
}

func isBoolLike(v sobek.Value) bool {
	_, ok := v.Export().(bool)
	return ok
}
