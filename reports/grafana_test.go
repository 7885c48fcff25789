package reports

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// dashboardFile is the example Grafana dashboard docs/grafana.md loads.
var dashboardFile = filepath.Join("..", "docs", "grafana", "schedsim-dashboard.json")

// promNonMetric are the words of a PromQL expression that are not metric
// names: aggregations, functions, keywords.
var promNonMetric = map[string]bool{
	"sum": true, "avg": true, "min": true, "max": true, "count": true, "by": true, "without": true, "bool": true,
	"on": true, "ignoring": true, "group_left": true, "group_right": true, "offset": true, "and": true, "or": true, "unless": true,
	"rate": true, "irate": true, "increase": true, "avg_over_time": true, "max_over_time": true, "min_over_time": true,
	"last_over_time": true, "label_values": true, "topk": true, "bottomk": true, "quantile": true, "clamp_min": true, "clamp_max": true,
}

var (
	promString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promMatchers = regexp.MustCompile(`\{([^}]*)\}`)
	promGrouping = regexp.MustCompile(`\b(?:by|without)\s*\(([^)]*)\)`)
	promRange    = regexp.MustCompile(`\[[^\]]*\]`)
	promVar      = regexp.MustCompile(`\$\{?\w+\}?`)
	promOffset   = regexp.MustCompile(`\boffset\s+-?[0-9][0-9a-z]*`)
	promNumber   = regexp.MustCompile(`\b[0-9][0-9.eE]*\b`)
	promIdent    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	promLabelEq  = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)`)
)

// promRefs returns the metric names and label names a PromQL expression
// (or a Grafana label_values(METRIC, LABEL) query) refers to.
func promRefs(expr string) (metrics, labels []string) {
	if m := regexp.MustCompile(`^label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*,\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)$`).FindStringSubmatch(strings.TrimSpace(expr)); m != nil {
		return []string{m[1]}, []string{m[2]}
	}
	for _, m := range promMatchers.FindAllStringSubmatch(expr, -1) {
		for _, l := range promLabelEq.FindAllStringSubmatch(m[1], -1) {
			labels = append(labels, l[1])
		}
	}
	for _, m := range promGrouping.FindAllStringSubmatch(expr, -1) {
		for l := range strings.SplitSeq(m[1], ",") {
			if l = strings.TrimSpace(l); l != "" {
				labels = append(labels, l)
			}
		}
	}
	rest := promString.ReplaceAllString(expr, " ")
	rest = promMatchers.ReplaceAllString(rest, " ")
	rest = promGrouping.ReplaceAllString(rest, " ")
	rest = promRange.ReplaceAllString(rest, " ")
	rest = promVar.ReplaceAllString(rest, " ")
	rest = promOffset.ReplaceAllString(rest, " ")
	rest = promNumber.ReplaceAllString(rest, " ")
	for _, id := range promIdent.FindAllString(rest, -1) {
		if !promNonMetric[id] {
			metrics = append(metrics, id)
		}
	}
	return metrics, labels
}

// TestPromRefs checks the expression scanner on the shapes the dashboard
// uses.
func TestPromRefs(t *testing.T) {
	for _, tc := range []struct {
		expr            string
		metrics, labels []string
	}{
		{`slurm_gpus_utilization`, []string{"slurm_gpus_utilization"}, nil},
		{`sum by (partition) (slurm_partition_jobs_pending{partition=~"$partition"})`, []string{"slurm_partition_jobs_pending"}, []string{"partition", "partition"}},
		{`avg by (Hostname) (DCGM_FI_DEV_GPU_UTIL{Hostname=~"$node", gpu!="7"}) / 100`, []string{"DCGM_FI_DEV_GPU_UTIL"}, []string{"Hostname", "gpu", "Hostname"}},
		{`max_over_time(slurm_cpus_alloc[10m]) - slurm_cpus_idle offset 1h`, []string{"slurm_cpus_alloc", "slurm_cpus_idle"}, nil},
		{`label_values(DCGM_FI_DEV_GPU_UTIL, Hostname)`, []string{"DCGM_FI_DEV_GPU_UTIL"}, []string{"Hostname"}},
	} {
		m, l := promRefs(tc.expr)
		if !slices.Equal(m, tc.metrics) || !slices.Equal(l, tc.labels) {
			t.Errorf("%s: metrics %q labels %q, want %q %q", tc.expr, m, l, tc.metrics, tc.labels)
		}
	}
}

// TestGrafanaDashboard parses docs/grafana/schedsim-dashboard.json as a
// Grafana dashboard (uid, title, schemaVersion, templating, panels with
// a grid position and targets) and checks that every metric a panel or
// variable queries is a family timeline.om writes (the fixture's, with
// the power family a power model adds) and every label it matches or
// groups by is one those families carry (or source, which
// docs/grafana.md adds to a run loaded into the real cluster's
// Prometheus). Each panel queries both the
// real cluster's datasource and the simulated run's (the ${real} and
// ${sim} variables), through Grafana's mixed datasource.
func TestGrafanaDashboard(t *testing.T) {
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	type dsRef struct{ Type, UID string }
	var d struct {
		UID           string
		Title         string
		SchemaVersion int
		Templating    struct {
			List []struct {
				Name, Type string
				Query      json.RawMessage
				Datasource *dsRef
			}
		}
		Panels []struct {
			ID         int
			Type       string
			Title      string
			Datasource dsRef
			GridPos    struct{ H, W, X, Y int }
			Targets    []struct {
				Datasource dsRef
				Expr       string
				RefID      string
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.UID == "" || d.Title == "" || d.SchemaVersion < 30 || len(d.Panels) == 0 {
		t.Fatalf("%s: not a Grafana dashboard: uid %q, title %q, schemaVersion %d, %d panels", dashboardFile, d.UID, d.Title, d.SchemaVersion, len(d.Panels))
	}

	// What timeline.om writes: families and label names.
	rec := fixtureRecord()
	a := Analyze(rec, fixtureOptions)
	a.Timeline.Power = true
	var om bytes.Buffer
	if err := WriteOpenMetrics(&om, rec, &a.Timeline); err != nil {
		t.Fatal(err)
	}
	families, samples := parseOpenMetrics(t, om.Bytes())
	if !slices.Contains(families, "DCGM_FI_DEV_POWER_USAGE") {
		t.Fatalf("with a power model timeline.om has no power family: %v", families)
	}
	labelsOf := map[string]map[string]bool{}
	for _, s := range samples {
		if labelsOf[s.name] == nil {
			labelsOf[s.name] = map[string]bool{}
		}
		for _, m := range regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)="`).FindAllStringSubmatch(s.labels, -1) {
			labelsOf[s.name][m[1]] = true
		}
	}
	check := func(where, expr string) {
		t.Helper()
		metrics, labels := promRefs(expr)
		if len(metrics) == 0 {
			t.Errorf("%s: %q queries no metric", where, expr)
		}
		for _, m := range metrics {
			if !slices.Contains(families, m) {
				t.Errorf("%s: %q queries %s, which timeline.om does not write (it writes %s)", where, expr, m, strings.Join(families, ", "))
			}
		}
		for _, l := range labels {
			// source="schedsim" is the label docs/grafana.md adds to a
			// run's series loaded beside real data in one Prometheus.
			ok := l == "source"
			for _, m := range metrics {
				ok = ok || labelsOf[m][l]
			}
			if !ok {
				t.Errorf("%s: %q uses label %s, which %v do not carry in timeline.om", where, expr, l, metrics)
			}
		}
	}

	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
		if v.Type != "query" {
			continue
		}
		var q struct{ Query string }
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Errorf("variable %s: query: %v", v.Name, err)
		}
		check("variable "+v.Name, q.Query)
	}
	if vars["real"] != "datasource" || vars["sim"] != "datasource" {
		t.Fatalf("templating lacks the datasource variables real and sim: %v", vars)
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		where := "panel " + p.Title
		if ids[p.ID] || p.ID == 0 {
			t.Errorf("%s: id %d not unique", where, p.ID)
		}
		ids[p.ID] = true
		if p.Type != "timeseries" || p.GridPos.W == 0 || p.GridPos.H == 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("%s: type %q, gridPos %+v", where, p.Type, p.GridPos)
		}
		if p.Datasource.UID != "-- Mixed --" {
			t.Errorf("%s: datasource %+v, want Grafana's mixed datasource", where, p.Datasource)
		}
		sides := map[string]bool{}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if refs[tg.RefID] || tg.RefID == "" {
				t.Errorf("%s: refId %q not unique", where, tg.RefID)
			}
			refs[tg.RefID] = true
			if tg.Datasource.Type != "prometheus" {
				t.Errorf("%s: target %s: datasource %+v, want prometheus", where, tg.RefID, tg.Datasource)
			}
			sides[tg.Datasource.UID] = true
			check(where, tg.Expr)
		}
		if !sides["${real}"] || !sides["${sim}"] {
			t.Errorf("%s: queries %v, want both ${real} and ${sim}", where, sides)
		}
	}
}
