package reports

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// Arrow metadata keys of jobs.parquet and timeline.parquet (doc.go lists
// them with the columns).
const (
	metaSchema     = "schedsim.schema_version"
	metaPolicy     = "schedsim.policy"
	metaSeed       = "schedsim.seed"
	metaConfigHash = "schedsim.config_hash"
	metaEpoch      = "schedsim.epoch"
	metaTau        = "schedsim.slowdown_tau_s"
	metaInterval   = "schedsim.interval_s"
	metaGPUs       = "schedsim.cluster_gpus"
	metaNodes      = "schedsim.cluster_nodes"
	metaCPUs       = "schedsim.cluster_cpus"
	metaParts      = "schedsim.partitions"
	metaPartGPUs   = "schedsim.partition_gpus"
	// Energy (only with a power model): the run's IT kWh and PUE.
	metaEnergyIT  = "schedsim.energy_it_kwh"
	metaEnergyPUE = "schedsim.energy_pue"
	// MIG (only when the cluster has MIG GPUs): "true"; the MIG columns
	// (jobs: mig; timeline: free_mig_slices, unusable_mig_slices) follow.
	metaMIG = "schedsim.mig"
	// MPS (only when a job asked for an MPS share): "true"; the jobs
	// column mps_share follows.
	metaMPS = "schedsim.mps"
	// Stretch (only when the runtime model stretched a run): "true"; the
	// columns jobs stretch_lost_gpu_seconds and timeline
	// gpu_seconds_effective follow.
	metaStretch = "schedsim.stretch"
)

// ParquetSchemaVersion is the schedsim.schema_version of the Parquet
// outputs; it changes only when a column is removed, renamed or changes
// meaning.
const ParquetSchemaVersion = 1

var (
	tsType   = &arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}
	dictType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
)

// col is one column: its field and the buffer its rows are added to.
type col struct {
	field arrow.Field
	buf   colBuf
}

// colBuf collects a column's values row by row, typed, and writes them
// as the column's chunk of a row group (pqfile.go).
type colBuf interface {
	// reserve makes room for n rows (a batch) before they are added.
	reserve(n int)
	add(i int)
	// flush writes the rows added since the last flush as the next
	// column chunk of p's row group, named by f, and forgets them.
	flush(p *pqWriter, f *arrow.Field)
}

func strCol(name string, get func(i int) string) col {
	return col{arrow.Field{Name: name, Type: arrow.BinaryTypes.String}, &strBuf{get: get}}
}

func dictCol(name string, get func(i int) string) col {
	return col{arrow.Field{Name: name, Type: dictType}, &dictBuf{get: get, index: map[string]int32{}}}
}

// tsCol writes epoch + t as a timestamp[s, UTC]; Unknown is null. The
// Parquet column is in milliseconds, as pqarrow writes a timestamp[s]
// (Parquet has no second unit).
func tsCol(name string, epoch int64, nullable bool, get func(i int) sim.Time) col {
	return col{arrow.Field{Name: name, Type: tsType, Nullable: nullable}, &numBuf[int64]{
		get: func(i int) (int64, bool) {
			t := get(i)
			return (epoch + int64(t)) * 1000, t != workload.Unknown
		}}}
}

// durCol writes an int64 number of seconds; Unknown is null.
func durCol(name string, get func(i int) sim.Time) col {
	return col{arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int64, Nullable: true}, &numBuf[int64]{
		get: func(i int) (int64, bool) {
			t := get(i)
			return int64(t), t != workload.Unknown
		}}}
}

func i64Col(name string, get func(i int) int64) col {
	return col{arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int64}, &numBuf[int64]{
		get: func(i int) (int64, bool) { return get(i), true }}}
}

func i32Col(name string, get func(i int) int32) col {
	return col{arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int32}, &numBuf[int32]{
		get: func(i int) (int32, bool) { return get(i), true }}}
}

func f64Col(name string, nullable bool, get func(i int) (float64, bool)) col {
	return col{arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float64, Nullable: nullable}, &numBuf[float64]{get: get}}
}

// numBuf is a fixed-width column: values, and the rows that are null
// (get's false; their value slots hold 0 and are not written).
type numBuf[T int32 | int64 | float64] struct {
	get   func(i int) (T, bool)
	vals  []T
	nulls []int // row offsets into vals
}

func (c *numBuf[T]) reserve(n int) { c.vals = slices.Grow(c.vals, n) }

func (c *numBuf[T]) add(i int) {
	v, ok := c.get(i)
	if !ok {
		c.nulls = append(c.nulls, len(c.vals))
		v = 0
	}
	c.vals = append(c.vals, v)
}

func (c *numBuf[T]) flush(p *pqWriter, f *arrow.Field) {
	n := len(c.vals)
	p.column(f.Name, kindOf(f.Type), n)
	var z T
	per := pqPageBytes / int(unsafe.Sizeof(z))
	nulls := c.nulls
	for lo := 0; lo < n || lo == 0; lo += per {
		hi := min(n, lo+per)
		k := 0
		for k < len(nulls) && nulls[k] < hi {
			k++
		}
		p.startPage(f.Nullable, lo, hi, nulls[:k])
		p.page = slices.Grow(p.page, (hi-lo)*int(unsafe.Sizeof(z)))
		p.page = appendPlain(p.page, c.vals[lo:hi], nulls[:k], lo)
		p.flushPage(pageData, hi-lo)
		nulls = nulls[k:]
		if n == 0 {
			break
		}
	}
	st := &p.chunk.stats
	st.min, st.max, st.has = numStats(c.vals, c.nulls)
	st.nulls = int64(len(c.nulls))
	c.vals, c.nulls = c.vals[:0], c.nulls[:0]
}

// strBuf is a string column: its values (strings are immutable, so
// they are kept as they come rather than copied).
type strBuf struct {
	get  func(i int) string
	vals []string
}

func (c *strBuf) reserve(n int) { c.vals = slices.Grow(c.vals, n) }

func (c *strBuf) add(i int) { c.vals = append(c.vals, c.get(i)) }

func (c *strBuf) flush(p *pqWriter, f *arrow.Field) {
	p.column(f.Name, kindString, len(c.vals))
	size := 0
	for _, v := range c.vals {
		size += 4 + len(v)
	}
	p.page = slices.Grow(p.page[:0], min(size, pqPageBytes))
	var mn, mx string
	rows := 0
	for i, v := range c.vals {
		if i == 0 {
			mn, mx = v, v
		} else if v != mx {
			mn, mx = min(mn, v), max(mx, v)
		}
		p.page = binary.LittleEndian.AppendUint32(p.page, uint32(len(v)))
		p.page = append(p.page, v...)
		rows++
		if len(p.page) >= pqPageBytes {
			p.flushPage(pageData, rows)
			rows = 0
		}
	}
	if rows > 0 || p.chunk.dataPages == 0 {
		p.flushPage(pageData, rows)
	}
	st := &p.chunk.stats
	if len(c.vals) > 0 {
		st.min, st.max, st.has = []byte(mn), []byte(mx), true
	}
	clear(c.vals) // let the strings go
	c.vals = c.vals[:0]
}

// dictBuf is a dictionary column: its distinct values in the order they
// first came, and each row's index into them.
type dictBuf struct {
	get    func(i int) string
	index  map[string]int32
	values []string
	rows   []uint32
	last   int32 // the index of the last row added
}

func (c *dictBuf) reserve(n int) { c.rows = slices.Grow(c.rows, n) }

func (c *dictBuf) add(i int) {
	s := c.get(i)
	if len(c.rows) == 0 || s != c.values[c.last] {
		k, ok := c.index[s]
		if !ok {
			k = int32(len(c.values))
			c.index[s] = k
			c.values = append(c.values, s)
		}
		c.last = k
	}
	c.rows = append(c.rows, uint32(c.last))
}

func (c *dictBuf) flush(p *pqWriter, f *arrow.Field) {
	p.column(f.Name, kindDict, len(c.rows))
	p.page = p.page[:0]
	var mn, mx string
	for i, v := range c.values {
		if i == 0 {
			mn, mx = v, v
		}
		mn, mx = min(mn, v), max(mx, v)
		p.page = binary.LittleEndian.AppendUint32(p.page, uint32(len(v)))
		p.page = append(p.page, v...)
	}
	p.flushPage(pageDictionary, len(c.values))
	w := bitWidth(len(c.values))
	p.page = append(p.page, byte(w))
	p.page = appendHybrid(p.page, c.rows, w)
	p.flushPage(pageData, len(c.rows))
	st := &p.chunk.stats
	if len(c.values) > 0 {
		st.min, st.max, st.has = []byte(mn), []byte(mx), true
	}
	clear(c.index)
	c.values, c.rows = c.values[:0], c.rows[:0]
}

// writeParquet writes n rows of cols as one Parquet file (pqfile.go:
// Snappy, one row group per 64Ki rows) with the Arrow schema and meta
// stored in it. Only the Arrow dictionary columns (dictCol: partition,
// state, GPU type, size class) are dictionary-encoded in Parquet; the
// others are plain: dictionaries of job ids, times and node lists mostly
// do not pay (on the 20k-job HPC2N run the plain files were 6 % smaller).
func writeParquet(w io.Writer, cols []col, n int, meta map[string]string) error {
	fields := make([]arrow.Field, len(cols))
	for k, c := range cols {
		fields[k] = c.field
	}
	md := arrow.MetadataFrom(meta)
	schema := arrow.NewSchema(fields, &md)
	p := &pqWriter{w: w}
	p.write([]byte("PAR1"))
	const batch = 1 << 16
	for lo := 0; lo < n || (n == 0 && lo == 0); lo += batch {
		hi := min(n, lo+batch)
		for _, c := range cols {
			c.buf.reserve(hi - lo)
		}
		for i := lo; i < hi; i++ {
			for _, c := range cols {
				c.buf.add(i)
			}
		}
		p.rowGroup(hi - lo)
		for k, c := range cols {
			c.buf.flush(p, &fields[k])
		}
		if n == 0 {
			break
		}
	}
	p.footer(schema, int64(n))
	return p.err
}

// baseMeta is the metadata both Parquet files carry.
func baseMeta(s *Summary) map[string]string {
	return map[string]string{
		metaSchema:     strconv.Itoa(ParquetSchemaVersion),
		metaPolicy:     s.Policy,
		metaSeed:       strconv.FormatUint(s.Seed, 10),
		metaConfigHash: s.ConfigHash,
		metaEpoch:      strconv.FormatInt(s.Trace.Epoch, 10),
	}
}

// WriteJobsParquet writes a's job rows (Jobs, or the rows it streams) as
// jobs.parquet: one row per job in JobRef order, with the columns and
// metadata doc.go lists.
func WriteJobsParquet(w io.Writer, a *Analysis) error {
	n := a.JobCount()
	epoch := a.Summary.Trace.Epoch
	r := a.jobRow
	cols := []col{
		strCol("job_id", func(i int) string { return r(i).ID }),
		strCol("job_name", func(i int) string { return r(i).Name }),
		strCol("user", func(i int) string { return r(i).User }),
		strCol("account", func(i int) string { return r(i).Account }),
		dictCol("partition", func(i int) string { return r(i).Partition }),
		dictCol("state", func(i int) string { return r(i).State }),
		dictCol("gpu_type", func(i int) string { return r(i).GPUType }),
		dictCol("alloc_gpu_type", func(i int) string { return r(i).AllocGPUType }),
		dictCol("size_class", func(i int) string { return r(i).SizeClass }),
		tsCol("submit", epoch, false, func(i int) sim.Time { return r(i).Submit }),
		tsCol("eligible", epoch, true, func(i int) sim.Time { return r(i).Eligible }),
		tsCol("start", epoch, true, func(i int) sim.Time { return r(i).Start }),
		tsCol("end", epoch, true, func(i int) sim.Time { return r(i).End }),
		durCol("wait_s", func(i int) sim.Time { return r(i).Wait }),
		durCol("response_s", func(i int) sim.Time { return r(i).Response }),
		durCol("run_s", func(i int) sim.Time { return r(i).Run }),
		durCol("time_limit_s", func(i int) sim.Time { return r(i).TimeLimit }),
		durCol("trace_runtime_s", func(i int) sim.Time { return r(i).TraceRuntime }),
		f64Col("bounded_slowdown", true, func(i int) (float64, bool) { return r(i).Slowdown, r(i).HasSlowdown }),
		i32Col("req_nodes", func(i int) int32 { return r(i).ReqNodes }),
		i32Col("req_gpus", func(i int) int32 { return r(i).ReqGPUs }),
		i32Col("req_cpus", func(i int) int32 { return r(i).ReqCPUs }),
		i64Col("req_mem_mb", func(i int) int64 { return r(i).ReqMemMB }),
		i32Col("alloc_nodes", func(i int) int32 { return r(i).AllocNodes }),
		i32Col("alloc_gpus", func(i int) int32 { return r(i).AllocGPUs }),
		i32Col("alloc_cpus", func(i int) int32 { return r(i).AllocCPUs }),
		i64Col("alloc_mem_mb", func(i int) int64 { return r(i).AllocMemMB }),
		i64Col("gpu_seconds", func(i int) int64 { return r(i).GPUSeconds }),
		i64Col("cpu_seconds", func(i int) int64 { return r(i).CPUSeconds }),
		i64Col("lost_gpu_seconds", func(i int) int64 { return r(i).LostGPUSeconds }),
		i32Col("requeues", func(i int) int32 { return r(i).Requeues }),
		i32Col("preemptions", func(i int) int32 { return r(i).Preemptions }),
		i32Col("node_fails", func(i int) int32 { return r(i).NodeFails }),
		strCol("node_list", func(i int) string { return r(i).NodeList }),
		strCol("reason", func(i int) string { return r(i).Reason }),
	}
	e := &a.Summary.Energy
	if e.Modeled {
		cols = append(cols, f64Col("energy_kwh", false, func(i int) (float64, bool) { return r(i).EnergyKWh, true }))
	}
	if a.Timeline.MIG {
		cols = append(cols, strCol("mig", func(i int) string { return r(i).MIG }))
	}
	mps := a.anyMPS()
	if mps {
		cols = append(cols, i32Col("mps_share", func(i int) int32 { return r(i).MPSShare }))
	}
	stretch := a.Summary.GPUEffective.StretchedRuns > 0
	if stretch {
		cols = append(cols, i64Col("stretch_lost_gpu_seconds", func(i int) int64 { return r(i).StretchLostGPUSeconds }))
	}
	meta := baseMeta(&a.Summary)
	meta[metaTau] = strconv.FormatInt(int64(a.Summary.Slowdown.Tau), 10)
	if a.Timeline.MIG {
		meta[metaMIG] = "true"
	}
	if mps {
		meta[metaMPS] = "true"
	}
	if stretch {
		meta[metaStretch] = "true"
	}
	if e.Modeled {
		meta[metaEnergyIT] = strconv.FormatFloat(e.ITKWh, 'g', -1, 64)
		meta[metaEnergyPUE] = strconv.FormatFloat(e.PUE, 'g', -1, 64)
	}
	return writeParquet(w, cols, n, meta)
}

// WriteTimelineParquet writes a.Timeline as timeline.parquet: one row per
// bin, with the columns and metadata doc.go lists.
func WriteTimelineParquet(w io.Writer, a *Analysis) error {
	tl := &a.Timeline
	ss := tl.Samples
	s := func(i int) *Sample { return &ss[i] }
	cols := []col{
		tsCol("time", tl.Epoch, false, func(i int) sim.Time { return s(i).Start }),
		i64Col("bin_s", func(i int) int64 { return s(i).Len() }),
		i64Col("gpu_seconds", func(i int) int64 { return s(i).GPUSeconds }),
		i64Col("node_seconds", func(i int) int64 { return s(i).NodeSeconds }),
		i64Col("cpu_seconds", func(i int) int64 { return s(i).CPUSeconds }),
		f64Col("gpu_util", false, func(i int) (float64, bool) { return tl.GPUUtil(s(i)), true }),
		f64Col("node_util", false, func(i int) (float64, bool) { return tl.NodeUtil(s(i)), true }),
		f64Col("cpu_util", false, func(i int) (float64, bool) { return tl.CPUUtil(s(i)), true }),
	}
	for p, name := range tl.Partitions {
		cols = append(cols, i64Col("gpu_seconds:"+name, func(i int) int64 { return s(i).PartGPUSeconds[p] }))
	}
	cols = append(cols,
		i64Col("queue_seconds", func(i int) int64 { return s(i).QueueSeconds }),
		i64Col("pending_gpu_seconds", func(i int) int64 { return s(i).PendingGPUSeconds }),
		f64Col("queue_mean", false, func(i int) (float64, bool) { return ratio(s(i).QueueSeconds, s(i).Len()), true }),
		f64Col("pending_gpus_mean", false, func(i int) (float64, bool) { return ratio(s(i).PendingGPUSeconds, s(i).Len()), true }),
		i32Col("started", func(i int) int32 { return s(i).Started }),
		i32Col("ended", func(i int) int32 { return s(i).Ended }),
		i32Col("queued", func(i int) int32 { return s(i).Queued }),
		i32Col("free_gpus", func(i int) int32 { return s(i).FreeGPUs }),
		i32Col("unusable_free_gpus", func(i int) int32 { return s(i).UnusableFreeGPUs }),
	)
	for r, name := range ReasonNames() {
		cols = append(cols, i32Col("pending_reason:"+name, func(i int) int32 { return s(i).PendingByReason[r] }))
	}
	if tl.Power {
		cols = append(cols, f64Col("energy_kwh", false, func(i int) (float64, bool) { return s(i).EnergyKWh, true }))
	}
	if tl.MIG {
		cols = append(cols,
			i32Col("free_mig_slices", func(i int) int32 { return s(i).FreeMIGSlices }),
			i32Col("unusable_mig_slices", func(i int) int32 { return s(i).UnusableMIGSlices }),
		)
	}
	if tl.Stretch {
		cols = append(cols, i64Col("gpu_seconds_effective", func(i int) int64 { return s(i).EffectiveGPUSeconds }))
	}
	meta := baseMeta(&a.Summary)
	meta[metaInterval] = strconv.FormatInt(int64(tl.Interval), 10)
	if tl.MIG {
		meta[metaMIG] = "true"
	}
	if tl.Stretch {
		meta[metaStretch] = "true"
	}
	if e := &a.Summary.Energy; e.Modeled {
		meta[metaEnergyIT] = strconv.FormatFloat(e.ITKWh, 'g', -1, 64)
		meta[metaEnergyPUE] = strconv.FormatFloat(e.PUE, 'g', -1, 64)
	}
	meta[metaGPUs] = strconv.FormatInt(tl.GPUs, 10)
	meta[metaNodes] = strconv.FormatInt(tl.Nodes, 10)
	meta[metaCPUs] = strconv.FormatInt(tl.CPUs, 10)
	parts, _ := json.Marshal(nonNil(tl.Partitions))
	meta[metaParts] = string(parts)
	pg := tl.PartitionGPUs
	if pg == nil {
		pg = []int64{}
	}
	partGPUs, _ := json.Marshal(pg)
	meta[metaPartGPUs] = string(partGPUs)
	return writeParquet(w, cols, len(ss), meta)
}

// table is a Parquet file read back: its columns by name and metadata.
type table struct {
	path string
	rows int
	cols map[string]arrow.Array
	meta map[string]string
	tbl  arrow.Table
}

func readParquet(path string, data []byte) (*table, error) {
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.NewGoAllocator())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	t := &table{path: path, rows: int(tbl.NumRows()), cols: map[string]arrow.Array{}, meta: map[string]string{}, tbl: tbl}
	// The schedsim.* keys are the file's key-value metadata.
	md := pf.MetaData().KeyValueMetadata()
	for i, k := range md.Keys() {
		t.meta[k] = md.Values()[i]
	}
	for i := 0; i < int(tbl.NumCols()); i++ {
		c := tbl.Column(i)
		chunks := c.Data().Chunks()
		var arr arrow.Array
		switch len(chunks) {
		case 0:
			arr = array.MakeArrayOfNull(memory.NewGoAllocator(), c.DataType(), 0)
		case 1:
			arr = chunks[0]
		default:
			arr, err = array.Concatenate(chunks, memory.NewGoAllocator())
			if err != nil {
				return nil, fmt.Errorf("%s: column %s: %w", path, c.Name(), err)
			}
		}
		t.cols[c.Name()] = arr
	}
	return t, nil
}

func (t *table) col(name string) (arrow.Array, error) {
	a, ok := t.cols[name]
	if !ok {
		return nil, fmt.Errorf("%s: no column %q", t.path, name)
	}
	return a, nil
}

// strings returns a string or dictionary-of-string column.
func (t *table) strings(name string) ([]string, error) {
	a, err := t.col(name)
	if err != nil {
		return nil, err
	}
	out := make([]string, a.Len())
	switch a := a.(type) {
	case *array.String:
		for i := range out {
			out[i] = a.Value(i)
		}
	case *array.Dictionary:
		d, ok := a.Dictionary().(*array.String)
		if !ok {
			return nil, fmt.Errorf("%s: column %s: dictionary of %s, want string", t.path, name, a.Dictionary().DataType())
		}
		for i := range out {
			if a.IsValid(i) {
				out[i] = d.Value(a.GetValueIndex(i))
			}
		}
	default:
		return nil, fmt.Errorf("%s: column %s: type %s, want string", t.path, name, a.DataType())
	}
	return out, nil
}

// ints returns an integer or timestamp column; nulls become null (the
// caller's marker).
func (t *table) ints(name string, null int64) ([]int64, error) {
	a, err := t.col(name)
	if err != nil {
		return nil, err
	}
	out := make([]int64, a.Len())
	for i := range out {
		if a.IsNull(i) {
			out[i] = null
			continue
		}
		switch a := a.(type) {
		case *array.Int64:
			out[i] = a.Value(i)
		case *array.Int32:
			out[i] = int64(a.Value(i))
		case *array.Timestamp:
			// Parquet has no second unit: the file stores milliseconds.
			out[i] = int64(a.Value(i))
			switch a.DataType().(*arrow.TimestampType).Unit {
			case arrow.Millisecond:
				out[i] /= 1e3
			case arrow.Microsecond:
				out[i] /= 1e6
			case arrow.Nanosecond:
				out[i] /= 1e9
			}
		default:
			return nil, fmt.Errorf("%s: column %s: type %s, want an integer", t.path, name, a.DataType())
		}
	}
	return out, nil
}

func (t *table) floats(name string) ([]float64, []bool, error) {
	a, err := t.col(name)
	if err != nil {
		return nil, nil, err
	}
	f, ok := a.(*array.Float64)
	if !ok {
		return nil, nil, fmt.Errorf("%s: column %s: type %s, want float64", t.path, name, a.DataType())
	}
	out := make([]float64, a.Len())
	valid := make([]bool, a.Len())
	for i := range out {
		if f.IsValid(i) {
			out[i], valid[i] = f.Value(i), true
		}
	}
	return out, valid, nil
}

func (t *table) metaInt(key string) (int64, error) {
	v, ok := t.meta[key]
	if !ok {
		return 0, fmt.Errorf("%s: no metadata %q", t.path, key)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: metadata %s: %w", t.path, key, err)
	}
	return n, nil
}

// ReadJobsParquet reads jobs.parquet data (path names it in errors) back
// into JobRows, with times relative to the file's epoch, and returns its
// metadata too.
func ReadJobsParquet(path string, data []byte) ([]JobRow, map[string]string, error) {
	t, err := readParquet(path, data)
	if err != nil {
		return nil, nil, err
	}
	defer t.tbl.Release()
	epoch, err := t.metaInt(metaEpoch)
	if err != nil {
		return nil, nil, err
	}
	rows := make([]JobRow, t.rows)
	var firstErr error
	strs := func(name string, set func(r *JobRow, v string)) {
		v, err := t.strings(name)
		if err != nil {
			firstErr = cmpErr(firstErr, err)
			return
		}
		for i := range rows {
			set(&rows[i], v[i])
		}
	}
	times := func(name string, ts bool, set func(r *JobRow, v sim.Time)) {
		v, err := t.ints(name, int64(workload.Unknown))
		if err != nil {
			firstErr = cmpErr(firstErr, err)
			return
		}
		for i := range rows {
			x := sim.Time(v[i])
			if ts && x != workload.Unknown {
				x -= sim.Time(epoch)
			}
			set(&rows[i], x)
		}
	}
	ints := func(name string, set func(r *JobRow, v int64)) {
		v, err := t.ints(name, 0)
		if err != nil {
			firstErr = cmpErr(firstErr, err)
			return
		}
		for i := range rows {
			set(&rows[i], v[i])
		}
	}
	strs("job_id", func(r *JobRow, v string) { r.ID = v })
	strs("job_name", func(r *JobRow, v string) { r.Name = v })
	strs("user", func(r *JobRow, v string) { r.User = v })
	strs("account", func(r *JobRow, v string) { r.Account = v })
	strs("partition", func(r *JobRow, v string) { r.Partition = v })
	strs("state", func(r *JobRow, v string) { r.State = v })
	strs("gpu_type", func(r *JobRow, v string) { r.GPUType = v })
	strs("alloc_gpu_type", func(r *JobRow, v string) { r.AllocGPUType = v })
	strs("size_class", func(r *JobRow, v string) { r.SizeClass = v })
	strs("node_list", func(r *JobRow, v string) { r.NodeList = v })
	strs("reason", func(r *JobRow, v string) { r.Reason = v })
	times("submit", true, func(r *JobRow, v sim.Time) { r.Submit = v })
	times("eligible", true, func(r *JobRow, v sim.Time) { r.Eligible = v })
	times("start", true, func(r *JobRow, v sim.Time) { r.Start = v })
	times("end", true, func(r *JobRow, v sim.Time) { r.End = v })
	times("wait_s", false, func(r *JobRow, v sim.Time) { r.Wait = v })
	times("response_s", false, func(r *JobRow, v sim.Time) { r.Response = v })
	times("run_s", false, func(r *JobRow, v sim.Time) { r.Run = v })
	times("time_limit_s", false, func(r *JobRow, v sim.Time) { r.TimeLimit = v })
	times("trace_runtime_s", false, func(r *JobRow, v sim.Time) { r.TraceRuntime = v })
	ints("req_nodes", func(r *JobRow, v int64) { r.ReqNodes = int32(v) })
	ints("req_gpus", func(r *JobRow, v int64) { r.ReqGPUs = int32(v) })
	ints("req_cpus", func(r *JobRow, v int64) { r.ReqCPUs = int32(v) })
	ints("req_mem_mb", func(r *JobRow, v int64) { r.ReqMemMB = v })
	ints("alloc_nodes", func(r *JobRow, v int64) { r.AllocNodes = int32(v) })
	ints("alloc_gpus", func(r *JobRow, v int64) { r.AllocGPUs = int32(v) })
	ints("alloc_cpus", func(r *JobRow, v int64) { r.AllocCPUs = int32(v) })
	ints("alloc_mem_mb", func(r *JobRow, v int64) { r.AllocMemMB = v })
	ints("gpu_seconds", func(r *JobRow, v int64) { r.GPUSeconds = v })
	ints("cpu_seconds", func(r *JobRow, v int64) { r.CPUSeconds = v })
	ints("lost_gpu_seconds", func(r *JobRow, v int64) { r.LostGPUSeconds = v })
	ints("requeues", func(r *JobRow, v int64) { r.Requeues = int32(v) })
	ints("preemptions", func(r *JobRow, v int64) { r.Preemptions = int32(v) })
	ints("node_fails", func(r *JobRow, v int64) { r.NodeFails = int32(v) })
	if sld, valid, err := t.floats("bounded_slowdown"); err != nil {
		firstErr = cmpErr(firstErr, err)
	} else {
		for i := range rows {
			rows[i].Slowdown, rows[i].HasSlowdown = sld[i], valid[i]
		}
	}
	if _, ok := t.meta[metaEnergyIT]; ok {
		// Written only with a power model.
		if kwh, _, err := t.floats("energy_kwh"); err != nil {
			firstErr = cmpErr(firstErr, err)
		} else {
			for i := range rows {
				rows[i].EnergyKWh = kwh[i]
			}
		}
	}
	if t.meta[metaMIG] == "true" {
		strs("mig", func(r *JobRow, v string) { r.MIG = v })
	}
	if t.meta[metaMPS] == "true" {
		ints("mps_share", func(r *JobRow, v int64) { r.MPSShare = int32(v) })
	}
	if t.meta[metaStretch] == "true" {
		ints("stretch_lost_gpu_seconds", func(r *JobRow, v int64) { r.StretchLostGPUSeconds = v })
	}
	if firstErr != nil {
		return nil, nil, firstErr
	}
	return rows, t.meta, nil
}

// ReadTimelineParquet reads timeline.parquet data (path names it in
// errors) back into a Timeline.
func ReadTimelineParquet(path string, data []byte) (*Timeline, error) {
	t, err := readParquet(path, data)
	if err != nil {
		return nil, err
	}
	defer t.tbl.Release()
	tl := &Timeline{}
	for _, m := range []struct {
		key string
		dst *int64
	}{{metaEpoch, &tl.Epoch}, {metaGPUs, &tl.GPUs}, {metaNodes, &tl.Nodes}, {metaCPUs, &tl.CPUs}} {
		if *m.dst, err = t.metaInt(m.key); err != nil {
			return nil, err
		}
	}
	iv, err := t.metaInt(metaInterval)
	if err != nil {
		return nil, err
	}
	tl.Interval = sim.Time(iv)
	if err := json.Unmarshal([]byte(t.meta[metaParts]), &tl.Partitions); err != nil {
		return nil, fmt.Errorf("%s: metadata %s: %w", path, metaParts, err)
	}
	if err := json.Unmarshal([]byte(t.meta[metaPartGPUs]), &tl.PartitionGPUs); err != nil {
		return nil, fmt.Errorf("%s: metadata %s: %w", path, metaPartGPUs, err)
	}
	if len(tl.PartitionGPUs) != len(tl.Partitions) {
		return nil, fmt.Errorf("%s: %d partitions but %d partition GPU counts", path, len(tl.Partitions), len(tl.PartitionGPUs))
	}
	tl.Samples = make([]Sample, t.rows)
	get := func(name string) []int64 {
		if err != nil {
			return nil
		}
		var v []int64
		v, err = t.ints(name, 0)
		return v
	}
	start, bin := get("time"), get("bin_s")
	gpu, node, cpu := get("gpu_seconds"), get("node_seconds"), get("cpu_seconds")
	queue, pend := get("queue_seconds"), get("pending_gpu_seconds")
	started, ended, queued := get("started"), get("ended"), get("queued")
	free, unusable := get("free_gpus"), get("unusable_free_gpus")
	parts := make([][]int64, len(tl.Partitions))
	for p, name := range tl.Partitions {
		parts[p] = get("gpu_seconds:" + name)
	}
	reasons := make([][]int64, numReasons)
	for r, name := range ReasonNames() {
		reasons[r] = get("pending_reason:" + name)
	}
	if err != nil {
		return nil, err
	}
	var energy []float64
	if _, ok := t.meta[metaEnergyIT]; ok {
		if energy, _, err = t.floats("energy_kwh"); err != nil {
			return nil, err
		}
		tl.Power = true
	}
	var freeMIG, unusableMIG []int64
	if t.meta[metaMIG] == "true" {
		tl.MIG = true
		freeMIG, unusableMIG = get("free_mig_slices"), get("unusable_mig_slices")
		if err != nil {
			return nil, err
		}
	}
	// Without stretch, effective GPU-seconds are the allocated ones.
	effective := gpu
	if t.meta[metaStretch] == "true" {
		tl.Stretch = true
		if effective = get("gpu_seconds_effective"); err != nil {
			return nil, err
		}
	}
	for i := range tl.Samples {
		s := &tl.Samples[i]
		s.EffectiveGPUSeconds = effective[i]
		if energy != nil {
			s.EnergyKWh = energy[i]
		}
		if freeMIG != nil {
			s.FreeMIGSlices, s.UnusableMIGSlices = int32(freeMIG[i]), int32(unusableMIG[i])
		}
		s.Start = sim.Time(start[i] - tl.Epoch)
		s.End = s.Start + sim.Time(bin[i])
		s.GPUSeconds, s.NodeSeconds, s.CPUSeconds = gpu[i], node[i], cpu[i]
		s.QueueSeconds, s.PendingGPUSeconds = queue[i], pend[i]
		s.Started, s.Ended, s.Queued = int32(started[i]), int32(ended[i]), int32(queued[i])
		s.FreeGPUs, s.UnusableFreeGPUs = int32(free[i]), int32(unusable[i])
		s.PartGPUSeconds = make([]int64, len(parts))
		for p := range parts {
			s.PartGPUSeconds[p] = parts[p][i]
		}
		s.PendingByReason = make([]int32, numReasons)
		for r := range reasons {
			s.PendingByReason[r] = int32(reasons[r][i])
		}
	}
	return tl, nil
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}
