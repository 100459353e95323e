package js

import (
	"fmt"
	"strings"
	"time"

	"github.com/tokenstorm/tokenstorm/js/executor"
	"github.com/tokenstorm/tokenstorm/js/metrics"
)

// completionTokensMetric is the counter the progress line derives tokens/s from.
const completionTokensMetric = "llm_completion_tokens"

// progress renders the live progress line. It is used by one goroutine only.
type progress struct {
	scenarios  []executor.Scenario // as given to the Run, in the same order as Progress
	start      time.Time
	lastAt     time.Time
	lastTokens float64
	tps        float64
}

// line renders k6's "running (elapsed/total), active/max VUs, N complete and M
// interrupted iterations" plus the current output tokens/s, measured as the
// llm_completion_tokens delta since the previous line.
func (p *progress) line(pr executor.Progress, e *metrics.Engine, maxVUs int64, final bool) string {
	now := time.Now()
	tokens := e.Counter(completionTokensMetric)
	if !p.lastAt.IsZero() {
		if dt := now.Sub(p.lastAt).Seconds(); dt > 0 {
			p.tps = (tokens - p.lastTokens) / dt
		}
	} else if el := now.Sub(p.start).Seconds(); el > 0 {
		p.tps = tokens / el
	}
	p.lastAt, p.lastTokens = now, tokens

	// k6 shows time against the planned length for timed scenarios and completed
	// against planned iterations when every scenario is iteration-based.
	var complete, interrupted, planned int64
	var length time.Duration
	timed := false
	for i, s := range pr.Scenarios {
		complete += s.Completed
		interrupted += s.Interrupted
		planned += s.Iterations
		if s.Iterations == 0 && i < len(p.scenarios) {
			timed = true
			sc := &p.scenarios[i]
			length = max(length, sc.StartTime+s.Duration-sc.GracefulStop)
		}
	}
	state := "running"
	if final {
		state = "finished"
	}
	var b strings.Builder
	if timed {
		fmt.Fprintf(&b, "%s (%s/%s), %d/%d VUs, %d complete and %d interrupted iterations",
			state, progressDuration(pr.Elapsed), progressDuration(length), pr.ActiveVUs, maxVUs, complete, interrupted)
	} else {
		fmt.Fprintf(&b, "%s (%s), %d/%d VUs, %d/%d complete and %d interrupted iterations",
			state, progressDuration(pr.Elapsed), pr.ActiveVUs, maxVUs, complete, planned, interrupted)
	}
	if tokens > 0 {
		if final {
			fmt.Fprintf(&b, ", %.0f tokens", tokens)
		} else {
			fmt.Fprintf(&b, ", %.0f tok/s", p.tps)
		}
	}
	return b.String()
}

// progressDuration prints like k6's progress bar: 0m05.2s, 1h02m03.0s.
func progressDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	h := d / time.Hour
	d -= h * time.Hour
	m := d / time.Minute
	d -= m * time.Minute
	s := d.Seconds()
	if h > 0 {
		return fmt.Sprintf("%dh%02dm%04.1fs", h, m, s)
	}
	return fmt.Sprintf("%dm%04.1fs", m, s)
}
