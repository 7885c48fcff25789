package reports

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
)

// omSample is one parsed sample line.
type omSample struct {
	name, labels string
	value        float64
	ts           int64
}

var (
	omSampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*\})? (\S+) (\d+)$`)
	omTypeLine   = regexp.MustCompile(`^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (gauge|counter|unknown)$`)
	omHelpLine   = regexp.MustCompile(`^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.+)$`)
)

// parseOpenMetrics reads data back under the OpenMetrics text rules the
// file keeps: every family declared by TYPE (and HELP) before its
// samples, families not interleaved or repeated, each series' samples in
// strictly increasing time, nothing but "# EOF" at the end.
func parseOpenMetrics(t *testing.T, data []byte) (families []string, samples []omSample) {
	t.Helper()
	text := string(data)
	if !strings.HasSuffix(text, "# EOF\n") {
		t.Fatalf("does not end in \"# EOF\\n\"")
	}
	lines := strings.Split(strings.TrimSuffix(text, "# EOF\n"), "\n")
	lines = lines[:len(lines)-1] // the text before "# EOF" ends in "\n"
	seen := map[string]bool{}
	helped := map[string]bool{}
	last := map[string]int64{} // series → last timestamp
	cur := ""
	for i, line := range lines {
		at := fmt.Sprintf("line %d %q", i+1, line)
		if m := omTypeLine.FindStringSubmatch(line); m != nil {
			if seen[m[1]] {
				t.Fatalf("%s: family %s declared twice (interleaved)", at, m[1])
			}
			seen[m[1]], cur = true, m[1]
			continue
		}
		if m := omHelpLine.FindStringSubmatch(line); m != nil {
			if m[1] != cur {
				t.Fatalf("%s: HELP for %s inside family %s", at, m[1], cur)
			}
			helped[cur] = true
			continue
		}
		m := omSampleLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("%s: not a TYPE, HELP or sample line", at)
		}
		if m[1] != cur {
			t.Fatalf("%s: sample of %s outside its family (in %s)", at, m[1], cur)
		}
		if !helped[cur] {
			t.Fatalf("%s: family %s has no HELP", at, cur)
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Fatalf("%s: value: %v", at, err)
		}
		ts, _ := strconv.ParseInt(m[4], 10, 64)
		key := m[1] + m[2]
		if prev, ok := last[key]; ok && ts <= prev {
			t.Fatalf("%s: timestamp %d not after %d", at, ts, prev)
		}
		last[key] = ts
		if len(families) == 0 || families[len(families)-1] != cur {
			families = append(families, cur)
		}
		samples = append(samples, omSample{m[1], m[2], v, ts})
	}
	return families, samples
}

func fixtureOpenMetrics(t *testing.T) []byte {
	t.Helper()
	rec := fixtureRecord()
	a := Analyze(rec, fixtureOptions)
	var b bytes.Buffer
	if err := WriteOpenMetrics(&b, rec, &a.Timeline); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestOpenMetricsFixture checks timeline.om of the fixture (see
// fixtureRecord) against values worked by hand. Bins are [0,3600),
// [3600,7200) and [7200,9500), stamped 1704067200 + their start.
// In bin 0:
//
//   - gpu002 holds job 105's 2 GPUs for 2400 s: 4800/3600 = 1.333 GPUs,
//     so GPU 0 reads 100 %, GPU 1 33.333 %, GPUs 2 and 3 0 %; GPU 1's
//     framebuffer 81920 MiB (h100-sxm-80gb: 80 GB) × 1/3 = 27306.667.
//   - queued job-seconds: gpu 101 [60,3600) + 103 [300,900) + 106
//     [1000,1800) = 3540 + 600 + 800 = 4940 → 1.372 pending; debug 102
//     [120,150) = 30 → 0.008.
//   - running job-seconds in gpu: 100 3600 + 105 2400 + 106 1800 = 7800
//     → 2.167; debug: 102 for 5 s → 0.001.
//   - GPU-seconds: 100 14400 + 102 5 + 105 4800 + 106 7200 = 26405 →
//     7.335 allocated of 12, utilization 0.611; debug's one node gpu003:
//     102 5 + 106 7200 = 7205 → 2.001 allocated, 1.999 idle.
//
// In bin 2, [7200,9500) of 2300 s: gpu003 holds job 106's 4 GPUs until
// 9000 and 107's 2 from 9000: (4·1800 + 2·500)/2300 = 8200/2300 = 3.565
// GPUs: GPU 3 reads 56.522 %.
func TestOpenMetricsFixture(t *testing.T) {
	families, samples := parseOpenMetrics(t, fixtureOpenMetrics(t))
	// No power model in the fixture: no power family.
	want := []string{"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED",
		"slurm_partition_jobs_pending", "slurm_partition_jobs_running", "slurm_partition_cpus_allocated", "slurm_partition_cpus_idle",
		"slurm_partition_cpus_total", "slurm_partition_gpus_allocated", "slurm_partition_gpus_idle",
		"slurm_cpus_alloc", "slurm_cpus_idle", "slurm_cpus_total", "slurm_gpus_alloc", "slurm_gpus_idle", "slurm_gpus_total", "slurm_gpus_utilization"}
	if strings.Join(families, " ") != strings.Join(want, " ") {
		t.Errorf("families\n got %v\nwant %v", families, want)
	}
	// 12 GPUs × 2 families + 2 partitions × 7 + 7 cluster series, 3 bins each.
	if n := len(samples); n != 3*(12*2+2*7+7) {
		t.Errorf("%d samples, want %d", n, 3*(12*2+2*7+7))
	}
	get := func(name, labelPart string, ts int64) float64 {
		t.Helper()
		for _, s := range samples {
			if s.name == name && strings.Contains(s.labels, labelPart) && s.ts == ts {
				return s.value
			}
		}
		t.Fatalf("no sample %s %s at %d", name, labelPart, ts)
		return 0
	}
	const t0, t2 = 1704067200, 1704067200 + 7200
	for _, c := range []struct {
		name, labels string
		ts           int64
		want         float64
	}{
		{"DCGM_FI_DEV_GPU_UTIL", `gpu="0",`, t0, 100}, // gpu001 GPU 0: job 100 all bin
		{"DCGM_FI_DEV_GPU_UTIL", `gpu="0",UUID="` + fakeUUID("tiny", "gpu002", 0), t0, 100},
		{"DCGM_FI_DEV_GPU_UTIL", `gpu="1",UUID="` + fakeUUID("tiny", "gpu002", 1), t0, 33.333},
		{"DCGM_FI_DEV_GPU_UTIL", `gpu="2",UUID="` + fakeUUID("tiny", "gpu002", 2), t0, 0},
		{"DCGM_FI_DEV_FB_USED", `gpu="1",UUID="` + fakeUUID("tiny", "gpu002", 1), t0, 27306.667},
		{"DCGM_FI_DEV_GPU_UTIL", `gpu="3",UUID="` + fakeUUID("tiny", "gpu003", 3), t2, 56.522},
		{"slurm_partition_jobs_pending", `partition="gpu"`, t0, 1.372},
		{"slurm_partition_jobs_pending", `partition="debug"`, t0, 0.008},
		{"slurm_partition_jobs_running", `partition="gpu"`, t0, 2.167},
		{"slurm_partition_jobs_running", `partition="debug"`, t0, 0.001},
		{"slurm_partition_gpus_allocated", `partition="debug"`, t0, 2.001},
		{"slurm_partition_gpus_idle", `partition="debug"`, t0, 1.999},
		{"slurm_partition_cpus_total", `partition="gpu"`, t0, 96},
		{"slurm_gpus_alloc", "", t0, 7.335},
		{"slurm_gpus_utilization", "", t0, 0.611},
		{"slurm_gpus_total", "", t2, 12},
	} {
		if got := get(c.name, c.labels, c.ts); got != c.want {
			t.Errorf("%s%s at %d = %v, want %v", c.name, c.labels, c.ts, got, c.want)
		}
	}
	// dcgm-exporter's label set, in its order.
	if !regexp.MustCompile(`^\{gpu="\d+",UUID="GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",device="nvidia\d+",modelName="h100-sxm-80gb",Hostname="gpu00\d"\}$`).MatchString(samples[0].labels) {
		t.Errorf("GPU labels %s are not dcgm-exporter's", samples[0].labels)
	}
}

// TestOpenMetricsEmpty: a run without bins writes only the terminator.
func TestOpenMetricsEmpty(t *testing.T) {
	var b bytes.Buffer
	rec := &sim.Record{Cluster: fixtureCluster()}
	if err := WriteOpenMetrics(&b, rec, &Timeline{}); err != nil {
		t.Fatal(err)
	}
	if b.String() != "# EOF\n" {
		t.Errorf("got %q", b.String())
	}
}

// TestOpenMetricsBound: 1000 nodes of 8 GPUs and one partition over 100
// bins would be (9 + 7 + 2·1000 + 3·8000) × 100 = 2,601,600 samples; the
// bound of 1,000,000 takes every k = 3 bins together: 34 samples a series,
// the last of one bin.
func TestOpenMetricsBound(t *testing.T) {
	cl := &hwmodels.Cluster{Name: "big", Partitions: []hwmodels.Partition{{Name: "p"}}}
	for i := range 1000 {
		cl.Nodes = append(cl.Nodes, hwmodels.Node{Name: fmt.Sprintf("n%04d", i), GPUs: 8, CPUs: 64})
	}
	tl := &Timeline{}
	for i := range 100 {
		tl.Samples = append(tl.Samples, Sample{Start: sim.Time(i * 3600), End: sim.Time(i*3600 + 3600)})
	}
	o := newOMSampler(&sim.Record{Cluster: cl}, tl)
	if len(o.groups) != 34 {
		t.Fatalf("%d samples a series, want 34", len(o.groups))
	}
	if g := o.groups[1]; g.from != 3*3600 || g.to != 6*3600 {
		t.Errorf("second sample spans [%d,%d), want [10800,21600)", g.from, g.to)
	}
	if g := o.groups[33]; g.from != 99*3600 || g.to != 100*3600 {
		t.Errorf("last sample spans [%d,%d), want the last bin", g.from, g.to)
	}
}

// exporterLint matches the promtool lint findings that the real
// exporters' own output draws: dcgm-exporter's camelCase labels
// (modelName) and the Slurm exporter's gauges named *_total. timeline.om
// keeps those names so that dashboards built on them work; anything else
// promtool says is a defect.
var exporterLint = regexp.MustCompile(`^(DCGM_FI_DEV_[A-Z_]+ label names should be written in 'snake_case' not 'camelCase'|slurm(_partition)?_[a-z]+_total non-counter metrics should not have "_total" suffix)$`)

// TestOpenMetricsPromtool runs promtool on the fixture's timeline.om:
// `check metrics` finds no error beyond exporterLint, and `tsdb
// create-blocks-from openmetrics` turns it into blocks holding every
// sample. A hand-made sample in dcgm-exporter's format shows that the
// accepted lint is the exporters' own.
func TestOpenMetricsPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("no promtool on PATH: this check needs Debian's prometheus package (apt-get install prometheus)")
	}
	dir := t.TempDir()
	check := func(name string, data []byte) []string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(data)
		out, err := cmd.CombinedOutput()
		var findings []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				findings = append(findings, l)
			}
		}
		for _, f := range findings {
			if !exporterLint.MatchString(f) {
				t.Errorf("%s: promtool check metrics: %s", name, f)
			}
		}
		// Exit status 3 is promtool's for lint findings only.
		if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 3 || len(findings) == 0) {
			t.Errorf("%s: promtool check metrics: %v\n%s", name, err, out)
		}
		return findings
	}
	data := fixtureOpenMetrics(t)
	check("timeline.om", data)
	exporter := []byte(`# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-00000000-0000-0000-0000-000000000000",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node1"} 87
# HELP slurm_partition_cpus_total Total CPUs for partition
# TYPE slurm_partition_cpus_total gauge
slurm_partition_cpus_total{partition="gpu"} 96
`)
	if f := check("dcgm-exporter sample", exporter); len(f) != 2 {
		t.Errorf("the exporters' own format drew %d lint findings, want 2: %q", len(f), f)
	}

	path := filepath.Join(dir, OpenMetricsFile)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, promtool, "tsdb", "create-blocks-from", "openmetrics", path, filepath.Join(dir, "tsdb")).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool tsdb create-blocks-from openmetrics: %v\n%s", err, out)
	}
	// The block table: ULID, min time, max time, duration, samples, ...
	var blocks int
	var total int64
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) >= 8 && regexp.MustCompile(`^[0-9A-Z]{26}$`).MatchString(f[0]) {
			n, err := strconv.ParseInt(f[4], 10, 64)
			if err != nil {
				t.Fatalf("block line %q: %v", l, err)
			}
			blocks++
			total += n
		}
	}
	if _, samples := parseOpenMetrics(t, data); blocks == 0 || total != int64(len(samples)) {
		t.Errorf("promtool made %d blocks of %d samples, want all %d samples:\n%s", blocks, total, len(samples), out)
	}
}
