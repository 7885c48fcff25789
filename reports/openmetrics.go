package reports

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/schedsim/schedsim/sim"
)

// OpenMetricsFile is the run's timeline in OpenMetrics text, under the
// metric names and labels of NVIDIA's dcgm-exporter and of the Prometheus
// Slurm exporter (github.com/vpenso/prometheus-slurm-exporter), so that a
// simulated run loads into Prometheus with `promtool tsdb
// create-blocks-from openmetrics` and shows in the dashboards built for
// real clusters (docs/grafana.md).
const OpenMetricsFile = "timeline.om"

// MaxOpenMetricsSamples bounds the samples timeline.om holds. A run whose
// series × bins exceed it is sampled every k bins (k the smallest that
// fits), each sample the mean over its k bins.
const MaxOpenMetricsSamples = 1_000_000

// WriteOpenMetrics writes the timeline tl of run rec as OpenMetrics text.
// There is one sample per timeline bin (or per k bins, see
// MaxOpenMetricsSamples), stamped with the bin's start as a Unix time
// (tl.Epoch + the bin's simulated start) and holding the bin's mean:
//
//   - DCGM_FI_DEV_GPU_UTIL, DCGM_FI_DEV_FB_USED and, with a power model,
//     DCGM_FI_DEV_POWER_USAGE per GPU, labelled as dcgm-exporter labels
//     them: gpu (index on the node), UUID (made up, stable: derived from
//     the cluster and node names), device (nvidiaN), modelName (the GPU
//     model's catalog name) and Hostname (the node). The simulator places
//     jobs on GPU counts, not GPU indices, so a node's GPU-seconds in the
//     bin fill its GPUs in index order: with b GPUs held on average, GPU
//     i reads 100 × clamp(b − i, 0, 1) %. A held GPU counts as fully
//     used: its whole framebuffer (the model's memory, GB × 1024 MiB) and
//     its busy power; an idle one none and its idle power.
//   - Per partition, as the Slurm exporter's partition collector names
//     them (label partition): slurm_partition_jobs_pending and
//     slurm_partition_jobs_running (jobs of the partition, queued or
//     running), slurm_partition_cpus_allocated, _idle and _total, and
//     slurm_partition_gpus_allocated and _idle (resources of the
//     partition's nodes, held by jobs of any partition, as sinfo counts
//     them).
//   - For the cluster, as its cpus and gpus collectors name them:
//     slurm_cpus_alloc, slurm_cpus_idle, slurm_cpus_total,
//     slurm_gpus_alloc, slurm_gpus_idle, slurm_gpus_total and
//     slurm_gpus_utilization (alloc / total).
//
// Families come in that order, each series' samples together in time
// order, series by node, GPU index and partition in the cluster's order;
// values have at most three decimals; the file ends in "# EOF". The same
// record gives the same bytes.
func WriteOpenMetrics(w io.Writer, rec *sim.Record, tl *Timeline) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	om := newOMSampler(rec, tl)
	if len(om.groups) > 0 {
		om.accumulate(rec)
		om.write(bw)
	}
	bw.WriteString("# EOF\n")
	return bw.Flush()
}

// omSampler holds a run's resource use per node and partition, summed
// over sample groups (runs of k timeline bins).
type omSampler struct {
	rec    *sim.Record
	epoch  int64
	groups []interval // [start, end) of each sample, simulated time
	// Per node and group: GPU use in 700ths of a GPU-second, CPU-seconds.
	gpu, cpu [][]int64
	// Per partition and group: job-seconds running and queued.
	running, queued [][]int64
	power           bool
}

func newOMSampler(rec *sim.Record, tl *Timeline) *omSampler {
	o := &omSampler{rec: rec, epoch: tl.Epoch, power: tl.Power}
	n := len(tl.Samples)
	if n == 0 {
		return o
	}
	cl := rec.Cluster
	// Series, and the per-node sums (two per node) held while writing.
	series := int64(9*len(cl.Partitions) + 7 + 2*len(cl.Nodes))
	for i := range cl.Nodes {
		series += 3 * int64(cl.Nodes[i].GPUs)
	}
	k := max(1, int((series*int64(n)+MaxOpenMetricsSamples-1)/MaxOpenMetricsSamples))
	for g := 0; g < n; g += k {
		last := min(g+k, n) - 1
		o.groups = append(o.groups, interval{tl.Samples[g].Start, tl.Samples[last].End})
	}
	grid := func(rows int) [][]int64 {
		out := make([][]int64, rows)
		for i := range out {
			out[i] = make([]int64, len(o.groups))
		}
		return out
	}
	o.gpu, o.cpu = make([][]int64, len(cl.Nodes)), grid(len(cl.Nodes))
	// A node without GPUs has no GPU-seconds (a start with GPUs there
	// fails the controller's checks): its GPU row is a shared row of
	// zeros, not its own (3.4 MB on the 240 CPU nodes of the HPC2N log).
	zeros := make([]int64, len(o.groups))
	for i := range o.gpu {
		if cl.Nodes[i].GPUs == 0 {
			o.gpu[i] = zeros
		} else {
			o.gpu[i] = make([]int64, len(o.groups))
		}
	}
	o.running, o.queued = grid(len(cl.Partitions)), grid(len(cl.Partitions))
	return o
}

// spread adds weight × the overlap of [from, to) with each group to row.
func (o *omSampler) spread(row []int64, from, to sim.Time, weight int64) {
	if weight == 0 || to <= from {
		return
	}
	g := sort.Search(len(o.groups), func(i int) bool { return o.groups[i].to > from })
	for ; g < len(o.groups) && o.groups[g].from < to; g++ {
		a, b := max(from, o.groups[g].from), min(to, o.groups[g].to)
		if b > a {
			row[g] += weight * int64(b-a)
		}
	}
}

// spreadNodes is spread of weights gw and cw over [from, to) to the gpu
// and cpu rows of the n nodes from node first on: the groups are found
// once for the span of nodes.
func (o *omSampler) spreadNodes(first int32, n int, from, to sim.Time, gw, cw int64) {
	if to <= from || gw == 0 && cw == 0 {
		return
	}
	g := sort.Search(len(o.groups), func(i int) bool { return o.groups[i].to > from })
	for ; g < len(o.groups) && o.groups[g].from < to; g++ {
		a, b := max(from, o.groups[g].from), min(to, o.groups[g].to)
		if b <= a {
			continue
		}
		d := int64(b - a)
		for node := first; node < first+int32(n); node++ {
			if gw != 0 {
				o.gpu[node][g] += gw * d
			}
			if cw != 0 {
				o.cpu[node][g] += cw * d
			}
		}
	}
}

func (o *omSampler) accumulate(rec *sim.Record) {
	runs := newRunTable(rec)
	var buf []runSpan
	var queue []interval
	for i := range rec.Jobs {
		j := &rec.Jobs[i]
		buf = runs.appendRuns(buf[:0], i)
		part := int(j.Part)
		inPart := part >= 0 && part < len(o.running)
		for _, r := range buf {
			if inPart {
				o.spread(o.running[part], r.start, r.end, 1)
			}
			for a, n := range r.alloc.Spans() {
				o.spreadNodes(a.Node, n, r.start, r.end, gpuParts(rec.Cluster, &a), int64(a.CPUs))
			}
		}
		if inPart {
			queue = queuedIntervals(queue[:0], rec, j, buf)
			for _, q := range queue {
				o.spread(o.queued[part], q.from, q.to, 1)
			}
		}
	}
}

// omFamily is one metric family of the file.
type omFamily struct{ name, help string }

func (o *omSampler) write(w *bufio.Writer) {
	cl := o.rec.Cluster
	fam := func(f omFamily) {
		fmt.Fprintf(w, "# TYPE %s gauge\n# HELP %s %s\n", f.name, f.name, f.help)
	}
	// series writes one series: value(g) for each group.
	series := func(name, labels string, value func(g int) float64) {
		for g, iv := range o.groups {
			w.WriteString(name)
			w.WriteString(labels)
			w.WriteByte(' ')
			w.WriteString(omValue(value(g)))
			w.WriteByte(' ')
			w.WriteString(strconv.FormatInt(o.epoch+int64(iv.from), 10))
			w.WriteByte('\n')
		}
	}
	length := func(g int) float64 { return float64(o.groups[g].to - o.groups[g].from) }
	// held returns GPU i of node n's held share in group g, 0 to 1.
	held := func(n, i, g int) float64 {
		b := float64(o.gpu[n][g]) / float64(gpuUnit) / length(g)
		return math.Min(math.Max(b-float64(i), 0), 1)
	}
	type gpuRef struct {
		node, index int
		labels      string
	}
	var gpus []gpuRef
	for n := range cl.Nodes {
		node := &cl.Nodes[n]
		for i := range int(node.GPUs) {
			gpus = append(gpus, gpuRef{n, i, fmt.Sprintf(`{gpu="%d",UUID="%s",device="nvidia%d",modelName="%s",Hostname="%s"}`,
				i, fakeUUID(cl.Name, node.Name, i), i, omEscape(node.GPUModel), omEscape(node.Name))})
		}
	}
	if len(gpus) > 0 {
		fam(omFamily{"DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %)."})
		for _, r := range gpus {
			series("DCGM_FI_DEV_GPU_UTIL", r.labels, func(g int) float64 { return 100 * held(r.node, r.index, g) })
		}
		fam(omFamily{"DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB)."})
		for _, r := range gpus {
			mib := 0.0
			if spec, ok := cl.GPU(cl.Nodes[r.node].GPUModel); ok {
				mib = float64(spec.MemGB) * 1024
			}
			series("DCGM_FI_DEV_FB_USED", r.labels, func(g int) float64 { return mib * held(r.node, r.index, g) })
		}
		if o.power {
			fam(omFamily{"DCGM_FI_DEV_POWER_USAGE", "Power draw (in W)."})
			for _, r := range gpus {
				p := cl.NodePower(r.node)
				series("DCGM_FI_DEV_POWER_USAGE", r.labels, func(g int) float64 {
					return p.GPUIdleW + (p.GPUBusyW-p.GPUIdleW)*held(r.node, r.index, g)
				})
			}
		}
	}
	// Per partition: its nodes' totals and use.
	type partUse struct {
		labels     string
		cpus, gpus int64
		nodes      []int32
	}
	parts := make([]partUse, len(cl.Partitions))
	for p := range cl.Partitions {
		pu := &parts[p]
		pu.labels = `{partition="` + omEscape(cl.Partitions[p].Name) + `"}`
		pu.nodes = cl.Partitions[p].Nodes
		for _, n := range pu.nodes {
			pu.cpus += int64(cl.Nodes[n].CPUs)
			pu.gpus += int64(cl.Nodes[n].GPUs)
		}
	}
	// sums[grid][nodes] holds, per group, the integer sum of grid over
	// the nodes (a partition's or all), made once per node list: node by
	// node along its row, not node by node per group and family.
	type sumKey struct {
		grid  *[]int64
		nodes *int32
		n     int
	}
	sums := map[sumKey][]int64{}
	sumNodes := func(grid [][]int64, nodes []int32, g int, unit float64) float64 {
		if len(nodes) == 0 || len(grid) == 0 {
			return 0 / unit / length(g)
		}
		k := sumKey{&grid[0], &nodes[0], len(nodes)}
		s, ok := sums[k]
		if !ok {
			s = make([]int64, len(o.groups))
			for _, n := range nodes {
				for gi, v := range grid[n] {
					s[gi] += v
				}
			}
			sums[k] = s
		}
		return float64(s[g]) / unit / length(g)
	}
	perPart := []struct {
		f omFamily
		v func(p, g int) float64
	}{
		{omFamily{"slurm_partition_jobs_pending", "Pending jobs for partition"}, func(p, g int) float64 { return float64(o.queued[p][g]) / length(g) }},
		{omFamily{"slurm_partition_jobs_running", "Running jobs for partition"}, func(p, g int) float64 { return float64(o.running[p][g]) / length(g) }},
		{omFamily{"slurm_partition_cpus_allocated", "Allocated CPUs for partition"}, func(p, g int) float64 { return sumNodes(o.cpu, parts[p].nodes, g, 1) }},
		{omFamily{"slurm_partition_cpus_idle", "Idle CPUs for partition"}, func(p, g int) float64 {
			return float64(parts[p].cpus) - sumNodes(o.cpu, parts[p].nodes, g, 1)
		}},
		{omFamily{"slurm_partition_cpus_total", "Total CPUs for partition"}, func(p, g int) float64 { return float64(parts[p].cpus) }},
		{omFamily{"slurm_partition_gpus_allocated", "Allocated GPUs for partition"}, func(p, g int) float64 {
			return sumNodes(o.gpu, parts[p].nodes, g, float64(gpuUnit))
		}},
		{omFamily{"slurm_partition_gpus_idle", "Idle GPUs for partition"}, func(p, g int) float64 {
			return float64(parts[p].gpus) - sumNodes(o.gpu, parts[p].nodes, g, float64(gpuUnit))
		}},
	}
	if len(parts) > 0 {
		for _, m := range perPart {
			fam(m.f)
			for p := range parts {
				series(m.f.name, parts[p].labels, func(g int) float64 { return m.v(p, g) })
			}
		}
	}
	all := make([]int32, len(cl.Nodes))
	var cpus, gpuTotal int64
	for n := range cl.Nodes {
		all[n] = int32(n)
		cpus += int64(cl.Nodes[n].CPUs)
		gpuTotal += int64(cl.Nodes[n].GPUs)
	}
	gpuAlloc := func(g int) float64 { return sumNodes(o.gpu, all, g, float64(gpuUnit)) }
	for _, m := range []struct {
		f omFamily
		v func(g int) float64
	}{
		{omFamily{"slurm_cpus_alloc", "Allocated CPUs"}, func(g int) float64 { return sumNodes(o.cpu, all, g, 1) }},
		{omFamily{"slurm_cpus_idle", "Idle CPUs"}, func(g int) float64 { return float64(cpus) - sumNodes(o.cpu, all, g, 1) }},
		{omFamily{"slurm_cpus_total", "Total CPUs"}, func(int) float64 { return float64(cpus) }},
		{omFamily{"slurm_gpus_alloc", "Allocated GPUs"}, gpuAlloc},
		{omFamily{"slurm_gpus_idle", "Idle GPUs"}, func(g int) float64 { return float64(gpuTotal) - gpuAlloc(g) }},
		{omFamily{"slurm_gpus_total", "Total GPUs"}, func(int) float64 { return float64(gpuTotal) }},
		{omFamily{"slurm_gpus_utilization", "Total GPU utilization"}, func(g int) float64 {
			if gpuTotal == 0 {
				return 0
			}
			return gpuAlloc(g) / float64(gpuTotal)
		}},
	} {
		fam(m.f)
		series(m.f.name, "", m.v)
	}
}

// omValue writes v with at most three decimals, no trailing zeros.
func omValue(v float64) string {
	r := math.Round(v*1000) / 1000
	if r == 0 {
		r = 0 // no "-0"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// omEscape escapes a label value: backslash, double quote, line feed.
func omEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// fakeUUID makes a GPU UUID in NVIDIA's form (GPU-8-4-4-4-12 hex digits)
// from the cluster, node and index, so series keep their identity across
// runs of one cluster.
func fakeUUID(cluster, node string, i int) string {
	h := sha256.Sum256([]byte(cluster + "\x00" + node + "\x00" + strconv.Itoa(i)))
	x := fmt.Sprintf("%x", h[:16])
	return "GPU-" + x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}
