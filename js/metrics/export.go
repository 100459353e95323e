package metrics

import (
	"encoding/json"

	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// exportJSON renders k6's --summary-export document: every metric's stats flat in one
// object (rate metrics as passes, fails and value), each threshold keyed by its
// expression with true meaning it FAILED (k6's long-standing, inverted-looking
// convention), and the group tree with checks and sub-groups keyed by name.
func (s *Summary) exportJSON(opts SummaryOptions) ([]byte, error) {
	metrics := make(map[string]map[string]any, len(s.Metrics))
	for name, m := range s.Metrics {
		out := make(map[string]any, 8)
		if m.Type == xk6ext.Rate {
			out["passes"] = m.Values["passes"]
			out["fails"] = m.Values["fails"]
			out["value"] = m.Values["rate"]
		} else {
			_, vals := m.statValues(opts)
			for k, v := range vals {
				out[k] = v
			}
		}
		if m.Thresholds != nil {
			ths := make(map[string]bool, len(m.Thresholds))
			for expr, ok := range m.Thresholds {
				ths[expr] = !ok
			}
			out["thresholds"] = ths
		}
		metrics[name] = out
	}
	root := s.RootGroup
	if root == nil {
		root = buildGroups(nil, nil)
	}
	doc := map[string]any{"root_group": exportGroup(root), "metrics": metrics}
	return json.MarshalIndent(doc, "", "    ")
}

func exportGroup(g *Group) map[string]any {
	groups := make(map[string]any, len(g.Groups))
	for _, sub := range g.Groups {
		groups[sub.Name] = exportGroup(sub)
	}
	checks := make(map[string]any, len(g.Checks))
	for _, c := range g.Checks {
		checks[c.Name] = map[string]any{
			"name": c.Name, "path": c.Path, "id": c.ID, "passes": c.Passes, "fails": c.Fails,
		}
	}
	return map[string]any{"name": g.Name, "path": g.Path, "id": g.ID, "groups": groups, "checks": checks}
}
