package js

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tokenstorm/tokenstorm/js/executor"
)

// writeBanner prints what is about to run, in k6's words, so a user sees at once how
// the script's options and the command line's overrides were combined.
func writeBanner(w io.Writer, script string, scenarios []executor.Scenario, maxVUs int64) {
	var b strings.Builder
	plural := "s"
	if len(scenarios) == 1 {
		plural = ""
	}
	fmt.Fprintf(&b, "     execution: local (tokenstorm)\n        script: %s\n\n", script)
	fmt.Fprintf(&b, "     scenarios: (100.00%%) %d scenario%s, %d max VUs, %s max duration (incl. graceful stop):\n",
		len(scenarios), plural, maxVUs, executor.TotalDuration(scenarios))
	for i := range scenarios {
		fmt.Fprintf(&b, "              * %s: %s\n", scenarios[i].Name, describeScenario(&scenarios[i]))
	}
	b.WriteString("\n")
	_, _ = io.WriteString(w, b.String())
}

// describeScenario says what a scenario does the way k6's banner does.
func describeScenario(sc *executor.Scenario) string {
	var s string
	switch sc.Executor {
	case executor.SharedIterations:
		s = fmt.Sprintf("%d iterations shared among %d VUs (maxDuration: %s, gracefulStop: %s)",
			sc.Iterations, sc.VUs, sc.MaxDuration, sc.GracefulStop)
	case executor.PerVUIterations:
		s = fmt.Sprintf("%d iterations for each of %d VUs (maxDuration: %s, gracefulStop: %s)",
			sc.Iterations, sc.VUs, sc.MaxDuration, sc.GracefulStop)
	case executor.ConstantVUs:
		s = fmt.Sprintf("%d looping VUs for %s (gracefulStop: %s)", sc.VUs, sc.Duration, sc.GracefulStop)
	case executor.RampingVUs:
		top := sc.StartVUs
		var total time.Duration
		for _, st := range sc.Stages {
			top = max(top, st.Target)
			total += st.Duration
		}
		s = fmt.Sprintf("Up to %d looping VUs for %s over %d stages (gracefulRampDown: %s, gracefulStop: %s)",
			top, total, len(sc.Stages), sc.GracefulRampDown, sc.GracefulStop)
	case executor.ConstantArrivalRate:
		s = fmt.Sprintf("%s iterations/s for %s (maxVUs: %d-%d, gracefulStop: %s)",
			perSecond(sc.Rate, sc), sc.Duration, sc.PreAllocatedVUs, sc.MaxVUs, sc.GracefulStop)
	case executor.RampingArrivalRate:
		top := sc.StartRate
		var total time.Duration
		for _, st := range sc.Stages {
			top = max(top, st.Target)
			total += st.Duration
		}
		s = fmt.Sprintf("Up to %s iterations/s for %s over %d stages (maxVUs: %d-%d, gracefulStop: %s)",
			perSecond(top, sc), total, len(sc.Stages), sc.PreAllocatedVUs, sc.MaxVUs, sc.GracefulStop)
	default:
		s = sc.Executor
	}
	if sc.Exec != "" && sc.Exec != executor.DefaultExec {
		s += ", exec: " + sc.Exec
	}
	if sc.StartTime > 0 {
		s += ", startTime: " + sc.StartTime.String()
	}
	return s
}

func perSecond(rate int64, sc *executor.Scenario) string {
	if sc.TimeUnit <= 0 {
		return fmt.Sprint(rate)
	}
	return fmt.Sprintf("%.2f", float64(rate)/sc.TimeUnit.Seconds())
}
