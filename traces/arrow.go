package traces

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/schedsim/schedsim/workload"
)

// ArrowSchemaVersion is the version of the job table schema, stored in the
// schema metadata under "schedsim.schema_version". A change that renames,
// removes or retypes a column increments it; adding a nullable column
// does not.
const ArrowSchemaVersion = 1

// Schema metadata keys.
const (
	metaVersion  = "schedsim.schema_version"
	metaEpoch    = "schedsim.epoch"
	metaSource   = "schedsim.source"
	metaTimeZone = "schedsim.time_zone"
	metaNotes    = "schedsim.notes"
)

var (
	dictString = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	tsSeconds  = &arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}
	kvStruct   = arrow.StructOf(
		arrow.Field{Name: "name", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "value", Type: arrow.BinaryTypes.String, Nullable: true},
	)
	depStruct = arrow.StructOf(
		arrow.Field{Name: "type", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "job_id", Type: arrow.BinaryTypes.String, Nullable: true},
	)
)

// Column indexes of the job table.
const (
	acID = iota
	acName
	acUser
	acAccount
	acPartition
	acQOS
	acArrayJobID
	acArrayTaskID
	acSubmit
	acTimeLimit
	acRuntime
	acCancelAfter
	acState
	acStart
	acEnd
	acNodes
	acGPUs
	acGPUType
	acCPUs
	acMem
	acDeps
	acExtra
	acThrottle
	acRequeue
	acCheckpoint
	acMIG
	acMPS
	acSwitches
	acSwitchWait
	numArrowCols
)

// ArrowSchema returns the schema of the job table that WriteArrow and
// WriteParquet write: one row per job, columns
//
//	id             utf8                     job id as the trace writes it
//	name           utf8, null = ""
//	user           dictionary<int32, utf8>, null = ""
//	account        dictionary<int32, utf8>, null = ""
//	partition      dictionary<int32, utf8>, null = ""
//	qos            dictionary<int32, utf8>, null = ""
//	array_job_id   utf8, null for jobs that are not array tasks
//	array_task_id  int32, null for jobs that are not array tasks
//	submit         timestamp[s, UTC]        Unix time of the submit
//	time_limit     int64 seconds, null = unknown
//	runtime        int64 seconds            recorded runtime
//	cancel_after   int64 seconds, null unless cancelled before starting
//	trace_state    dictionary<int32, utf8>, null = ""
//	trace_start    timestamp[s, UTC], null = unknown
//	trace_end      timestamp[s, UTC], null = unknown
//	req_nodes      int32                    0 = any
//	req_gpus       int32
//	gpu_type       dictionary<int32, utf8>, null = any type
//	req_cpus       int32
//	req_mem_mib    int64                    0 = unspecified
//	deps           list<struct<type: utf8, job_id: utf8>>
//	extra          list<struct<name: utf8, value: utf8>>  the trace's other columns, in order
//	array_throttle int32, null = no %N throttle
//	requeue        bool, null = false      sbatch --requeue
//	checkpoint_interval int64 seconds, null = never checkpoints
//	mig_profile    dictionary<int32, utf8>, null = whole GPUs   MIG profile ("1g.10gb")
//	mps_share      int32, null = 0          MPS share of one GPU per node, percent
//	switches       int32, null = 0          sbatch --switches=N (1 to 255)
//	switch_wait    int32 seconds, null = 0  --switches=N@T's T (0 to 65,535; 0 = max_switch_wait)
//
// Files without the columns after checkpoint_interval (written before they
// were added) read back with the zero values.
//
// and metadata schedsim.schema_version, schedsim.epoch (the trace's
// Epoch, Unix seconds), schedsim.source, schedsim.time_zone and
// schedsim.notes (the trace's notes, one per line).
func ArrowSchema(md *arrow.Metadata) *arrow.Schema {
	f := func(name string, t arrow.DataType, nullable bool) arrow.Field {
		return arrow.Field{Name: name, Type: t, Nullable: nullable}
	}
	fields := []arrow.Field{
		acID:          f("id", arrow.BinaryTypes.String, false),
		acName:        f("name", arrow.BinaryTypes.String, true),
		acUser:        f("user", dictString, true),
		acAccount:     f("account", dictString, true),
		acPartition:   f("partition", dictString, true),
		acQOS:         f("qos", dictString, true),
		acArrayJobID:  f("array_job_id", arrow.BinaryTypes.String, true),
		acArrayTaskID: f("array_task_id", arrow.PrimitiveTypes.Int32, true),
		acSubmit:      f("submit", tsSeconds, false),
		acTimeLimit:   f("time_limit", arrow.PrimitiveTypes.Int64, true),
		acRuntime:     f("runtime", arrow.PrimitiveTypes.Int64, false),
		acCancelAfter: f("cancel_after", arrow.PrimitiveTypes.Int64, true),
		acState:       f("trace_state", dictString, true),
		acStart:       f("trace_start", tsSeconds, true),
		acEnd:         f("trace_end", tsSeconds, true),
		acNodes:       f("req_nodes", arrow.PrimitiveTypes.Int32, false),
		acGPUs:        f("req_gpus", arrow.PrimitiveTypes.Int32, false),
		acGPUType:     f("gpu_type", dictString, true),
		acCPUs:        f("req_cpus", arrow.PrimitiveTypes.Int32, false),
		acMem:         f("req_mem_mib", arrow.PrimitiveTypes.Int64, false),
		acDeps:        f("deps", arrow.ListOf(depStruct), true),
		acExtra:       f("extra", arrow.ListOf(kvStruct), true),
		acThrottle:    f("array_throttle", arrow.PrimitiveTypes.Int32, true),
		acRequeue:     f("requeue", arrow.FixedWidthTypes.Boolean, true),
		acCheckpoint:  f("checkpoint_interval", arrow.PrimitiveTypes.Int64, true),
		acMIG:         f("mig_profile", dictString, true),
		acMPS:         f("mps_share", arrow.PrimitiveTypes.Int32, true),
		acSwitches:    f("switches", arrow.PrimitiveTypes.Int32, true),
		acSwitchWait:  f("switch_wait", arrow.PrimitiveTypes.Int32, true),
	}
	return arrow.NewSchema(fields, md)
}

// dictCols are the dictionary-encoded columns.
var dictCols = [...]int{acUser, acAccount, acPartition, acQOS, acState, acGPUType, acMIG}

// dictValue returns job j's value of dictionary column c.
func dictValue(j *workload.Job, c int) string {
	switch c {
	case acUser:
		return j.User
	case acAccount:
		return j.Account
	case acPartition:
		return j.Partition
	case acQOS:
		return j.QOS
	case acState:
		return j.TraceState
	case acGPUType:
		return j.Request.GPUType
	case acMIG:
		return j.Request.MIGProfile.String()
	}
	return ""
}

// Batch sizes: an Arrow IPC file is written in record batches of
// arrowBatch rows; a Parquet file in row groups of parquetRowGroup rows,
// fed parquetBatch rows at a time.
const (
	arrowBatch      = 1 << 16
	parquetBatch    = 1 << 15
	parquetRowGroup = 128 << 10
)

// arrowWriter writes the job table (ArrowSchema) as an Arrow IPC file or
// a Parquet file one batch at a time. Every batch's dictionaries hold the
// same values, all the planning pass found, in order of first appearance:
// an Arrow IPC file allows one dictionary per column.
type arrowWriter struct {
	meta    *workload.Trace // Epoch (Unix seconds), Source, TimeZone, Notes for the metadata
	clock   int64           // added to the jobs' times to make Unix seconds
	parquet bool
	vals    [numArrowCols][]string
	seen    [numArrowCols]map[string]struct{}

	mem    memory.Allocator
	schema *arrow.Schema
	dicts  [numArrowCols]*array.String
	b      *array.RecordBuilder
	rows   int
	batch  int
	nBatch int // batches written
	ipcW   *ipc.FileWriter
	pqW    *pqarrow.FileWriter
}

func newArrowWriter(meta *workload.Trace, clock int64, parquet bool) *arrowWriter {
	aw := &arrowWriter{meta: meta, clock: clock, parquet: parquet, mem: memory.NewGoAllocator(), batch: arrowBatch}
	if parquet {
		aw.batch = parquetBatch
	}
	for _, c := range dictCols {
		aw.seen[c] = map[string]struct{}{}
	}
	return aw
}

func (aw *arrowWriter) plan(j *workload.Job) {
	for _, c := range dictCols {
		v := dictValue(j, c)
		if v == "" {
			continue
		}
		if _, ok := aw.seen[c][v]; !ok {
			aw.seen[c][v] = struct{}{}
			aw.vals[c] = append(aw.vals[c], v)
		}
	}
}

func (aw *arrowWriter) targets() bool        { return false }
func (aw *arrowWriter) target(*workload.Job) {}

func (aw *arrowWriter) start(w io.Writer) error {
	md := traceMetadata(aw.meta)
	aw.schema = ArrowSchema(&md)
	for _, c := range dictCols {
		aw.seen[c] = nil
		sb := array.NewStringBuilder(aw.mem)
		sb.AppendValues(aw.vals[c], nil)
		aw.dicts[c] = sb.NewStringArray()
		sb.Release()
	}
	if err := aw.newBuilder(); err != nil {
		return err
	}
	var err error
	if aw.parquet {
		props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd),
			parquet.WithMaxRowGroupLength(parquetRowGroup), parquet.WithAllocator(aw.mem), parquet.WithCreatedBy("schedsim"))
		aw.pqW, err = pqarrow.NewFileWriter(aw.schema, w, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(aw.mem)))
		if err != nil {
			return fmt.Errorf("traces: write parquet: %w", err)
		}
		return nil
	}
	aw.ipcW, err = ipc.NewFileWriter(w, ipc.WithSchema(aw.schema), ipc.WithAllocator(aw.mem))
	if err != nil {
		return fmt.Errorf("traces: write arrow: %w", err)
	}
	return nil
}

// newBuilder starts a batch, its dictionaries seeded with every value.
func (aw *arrowWriter) newBuilder() error {
	if aw.b != nil {
		aw.b.Release()
	}
	aw.b = array.NewRecordBuilder(aw.mem, aw.schema)
	aw.rows = 0
	for _, c := range dictCols {
		if err := aw.b.Field(c).(*array.BinaryDictionaryBuilder).InsertStringDictValues(aw.dicts[c]); err != nil {
			return err
		}
	}
	return nil
}

func (aw *arrowWriter) write(j *workload.Job) error {
	if err := appendArrowJob(aw.b, j, aw.clock); err != nil {
		return err
	}
	aw.rows++
	if aw.rows == aw.batch {
		return aw.flush()
	}
	return nil
}

// flush writes the rows built so far as one batch.
func (aw *arrowWriter) flush() error {
	rec := aw.b.NewRecordBatch()
	defer rec.Release()
	var err error
	if aw.parquet {
		err = aw.pqW.WriteBuffered(rec)
	} else {
		err = aw.ipcW.Write(rec)
	}
	if err != nil {
		return fmt.Errorf("traces: write %s: %w", map[bool]string{false: "arrow", true: "parquet"}[aw.parquet], err)
	}
	aw.nBatch++
	return aw.newBuilder()
}

func (aw *arrowWriter) finish() error {
	// An empty trace still gets one (empty) batch, as it always has.
	if aw.rows > 0 || aw.nBatch == 0 {
		if err := aw.flush(); err != nil {
			return err
		}
	}
	defer aw.release()
	kind := "arrow"
	var err error
	if aw.parquet {
		kind, err = "parquet", aw.pqW.Close()
	} else {
		err = aw.ipcW.Close()
	}
	if err != nil {
		return fmt.Errorf("traces: write %s: %w", kind, err)
	}
	return nil
}

func (aw *arrowWriter) release() {
	if aw.b != nil {
		aw.b.Release()
		aw.b = nil
	}
	for _, c := range dictCols {
		if aw.dicts[c] != nil {
			aw.dicts[c].Release()
			aw.dicts[c] = nil
		}
	}
}

func traceMetadata(t *workload.Trace) arrow.Metadata {
	return arrow.NewMetadata(
		[]string{metaVersion, metaEpoch, metaSource, metaTimeZone, metaNotes},
		[]string{strconv.Itoa(ArrowSchemaVersion), strconv.FormatInt(t.Epoch, 10), t.Source, t.TimeZone, strings.Join(t.Notes, "\n")},
	)
}

// arrowRecord builds one record batch holding the jobs of t (their
// dictionaries in order of first appearance).
func arrowRecord(t *workload.Trace, mem memory.Allocator) (arrow.RecordBatch, error) {
	aw := newArrowWriter(t, t.Epoch, false)
	aw.mem = mem
	for i := range t.Jobs {
		aw.plan(&t.Jobs[i])
	}
	md := traceMetadata(t)
	aw.schema = ArrowSchema(&md)
	for _, c := range dictCols {
		sb := array.NewStringBuilder(mem)
		sb.AppendValues(aw.vals[c], nil)
		aw.dicts[c] = sb.NewStringArray()
		sb.Release()
	}
	defer aw.release()
	if err := aw.newBuilder(); err != nil {
		return nil, err
	}
	for i := range t.Jobs {
		if err := appendArrowJob(aw.b, &t.Jobs[i], t.Epoch); err != nil {
			return nil, err
		}
	}
	return aw.b.NewRecordBatch(), nil
}

// appendArrowJob appends job j to b, its times plus epoch as Unix seconds.
func appendArrowJob(b *array.RecordBuilder, j *workload.Job, epoch int64) error {
	str := func(c int, s string) {
		sb := b.Field(c).(*array.StringBuilder)
		if s == "" {
			sb.AppendNull()
		} else {
			sb.Append(s)
		}
	}
	ts := func(c int, v workload.Time) {
		tb := b.Field(c).(*array.TimestampBuilder)
		if v == workload.Unknown {
			tb.AppendNull()
		} else {
			tb.Append(arrow.Timestamp(epoch + int64(v)))
		}
	}
	i64 := func(c int, v int64, null bool) {
		ib := b.Field(c).(*array.Int64Builder)
		if null {
			ib.AppendNull()
		} else {
			ib.Append(v)
		}
	}
	i32 := func(c int, v int32) { b.Field(c).(*array.Int32Builder).Append(v) }
	i32z := func(c int, v int32) { // null for 0
		if v == 0 {
			b.Field(c).AppendNull()
		} else {
			i32(c, v)
		}
	}
	if j.ID == "" {
		return fmt.Errorf("traces: write arrow: a job has no id")
	}
	b.Field(acID).(*array.StringBuilder).Append(j.ID)
	str(acName, j.Name)
	for _, c := range dictCols {
		db := b.Field(c).(*array.BinaryDictionaryBuilder)
		if v := dictValue(j, c); v == "" {
			db.AppendNull()
		} else if err := db.AppendString(v); err != nil {
			return err
		}
	}
	if j.ArrayJobID == "" && j.ArrayTaskID < 0 {
		b.Field(acArrayJobID).AppendNull()
		b.Field(acArrayTaskID).AppendNull()
	} else {
		b.Field(acArrayJobID).(*array.StringBuilder).Append(j.ArrayJobID)
		b.Field(acArrayTaskID).(*array.Int32Builder).Append(j.ArrayTaskID)
	}
	b.Field(acSubmit).(*array.TimestampBuilder).Append(arrow.Timestamp(epoch + int64(j.Submit)))
	i64(acTimeLimit, int64(j.TimeLimit), j.TimeLimit == workload.Unknown)
	i64(acRuntime, int64(j.Runtime), false)
	i64(acCancelAfter, int64(j.CancelAfter), j.CancelAfter == workload.Unknown)
	ts(acStart, j.TraceStart)
	ts(acEnd, j.TraceEnd)
	i32(acNodes, j.Request.Nodes)
	i32(acGPUs, j.Request.GPUs)
	i32(acCPUs, j.Request.CPUs)
	b.Field(acMem).(*array.Int64Builder).Append(j.Request.MemMB)

	if j.ArrayThrottle == 0 {
		b.Field(acThrottle).AppendNull()
	} else {
		b.Field(acThrottle).(*array.Int32Builder).Append(j.ArrayThrottle)
	}
	if j.Requeue {
		b.Field(acRequeue).(*array.BooleanBuilder).Append(true)
	} else {
		b.Field(acRequeue).AppendNull()
	}
	i64(acCheckpoint, int64(j.CheckpointInterval), j.CheckpointInterval == 0)
	i32z(acMPS, j.Request.MPSShare)
	i32z(acSwitches, int32(j.Request.Switches))
	i32z(acSwitchWait, int32(j.Request.SwitchWait))

	lb := b.Field(acDeps).(*array.ListBuilder)
	lb.Append(true)
	sb := lb.ValueBuilder().(*array.StructBuilder)
	for _, d := range j.Deps {
		sb.Append(true)
		sb.FieldBuilder(0).(*array.StringBuilder).Append(d.Type.String())
		if d.JobID == "" {
			sb.FieldBuilder(1).AppendNull()
		} else {
			sb.FieldBuilder(1).(*array.StringBuilder).Append(d.JobID)
		}
	}
	lb = b.Field(acExtra).(*array.ListBuilder)
	lb.Append(true)
	sb = lb.ValueBuilder().(*array.StructBuilder)
	for _, f := range j.Extra {
		sb.Append(true)
		sb.FieldBuilder(0).(*array.StringBuilder).Append(f.Name)
		sb.FieldBuilder(1).(*array.StringBuilder).Append(f.Value)
	}
	return nil
}

// WriteArrow writes t as an Arrow IPC file (the "Feather v2" file format)
// with the schema of ArrowSchema, in record batches of 64Ki jobs.
func WriteArrow(w io.Writer, t *workload.Trace) error {
	return writeAll(w, newArrowWriter(t, t.Epoch, false), t)
}

// WriteParquet writes t as a Parquet file with the schema of ArrowSchema
// (stored in the file, so dictionary columns read back as dictionaries),
// zstd-compressed, in row groups of up to 128Ki jobs.
func WriteParquet(w io.Writer, t *workload.Trace) error {
	return writeAll(w, newArrowWriter(t, t.Epoch, true), t)
}

func traceFromMetadata(md arrow.Metadata, path string) (*workload.Trace, error) {
	t := &workload.Trace{}
	get := func(k string) string {
		if i := md.FindKey(k); i >= 0 {
			return md.Values()[i]
		}
		return ""
	}
	if v := get(metaVersion); v != "" && v != strconv.Itoa(ArrowSchemaVersion) {
		return nil, &ParseError{Path: path, Line: 1, Field: metaVersion, Value: v, Err: errKind(ErrRange, fmt.Sprintf("schema version %s, this build reads %d", v, ArrowSchemaVersion))}
	}
	if v := get(metaEpoch); v != "" {
		e, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, &ParseError{Path: path, Line: 1, Field: metaEpoch, Value: v, Err: errKind(ErrSyntax, "want Unix seconds")}
		}
		t.Epoch = e
	}
	t.Source = get(metaSource)
	t.TimeZone = get(metaTimeZone)
	if n := get(metaNotes); n != "" {
		t.Notes = strings.Split(n, "\n")
	}
	return t, nil
}

// column finds a column by name.
func column(rec arrow.RecordBatch, name string) arrow.Array {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) == 0 {
		return nil
	}
	return rec.Column(idx[0])
}

// strAt returns a string cell ("" for null or absent).
func strAt(a arrow.Array, i int) (string, error) {
	if a == nil || a.IsNull(i) {
		return "", nil
	}
	switch c := a.(type) {
	case *array.String:
		return c.Value(i), nil
	case *array.LargeString:
		return c.Value(i), nil
	case *array.Binary:
		return string(c.Value(i)), nil
	case *array.Dictionary:
		return strAt(c.Dictionary(), c.GetValueIndex(i))
	}
	return "", fmt.Errorf("column type %s, want a string", a.DataType())
}

// strCol reads the string cells of one column of one batch as strings
// that share no memory with the batch, so a trace keeps none of its
// batches alive: a plain column is copied once per batch into one string
// its cells slice (job ids are unique, so this is their compact form);
// dictionary values, and plain columns read with intern (user, state,
// the extra columns' names...), are interned per read, so each distinct
// value is one string however many jobs carry it.
type strCol struct {
	a      arrow.Array
	err    error // not a string column: reported at its first non-null cell
	vals   string
	o32    []int32
	o64    []int64
	dict   *array.Dictionary
	dvals  []string          // interned value of each dictionary index
	intern map[string]string // set: cells are read by strAt and interned
}

func newStrCol(a arrow.Array, intern map[string]string, internPlain bool) strCol {
	sc := strCol{a: a}
	if a == nil || a.Len() == 0 || a.NullN() == a.Len() {
		return sc
	}
	switch a.(type) {
	case *array.String, *array.LargeString, *array.Binary:
		if internPlain || !sc.copyPlain() {
			sc.intern = intern
		}
	case *array.Dictionary:
		if !sc.internDict(intern) {
			sc.intern = intern
		}
	default:
		sc.err = fmt.Errorf("column type %s, want a string", a.DataType())
	}
	return sc
}

// copyPlain copies the values of a plain string column, false if its
// offsets are malformed (its cells are then read one by one, as strAt
// reads them).
func (sc *strCol) copyPlain() (ok bool) {
	defer func() {
		if recover() != nil {
			sc.vals, sc.o32, sc.o64, ok = "", nil, nil, false
		}
	}()
	switch c := sc.a.(type) {
	case *array.String:
		sc.vals, sc.o32 = string(c.ValueBytes()), c.ValueOffsets()
	case *array.LargeString:
		sc.vals, sc.o64 = string(c.ValueBytes()), c.ValueOffsets()
	case *array.Binary:
		sc.vals, sc.o32 = string(c.ValueBytes()), c.ValueOffsets()
	}
	return true
}

// internDict interns the values of a dictionary column, false if one is
// not a string or is malformed (its cells are then read one by one).
func (sc *strCol) internDict(intern map[string]string) (ok bool) {
	defer func() {
		if recover() != nil {
			sc.dict, sc.dvals, ok = nil, nil, false
		}
	}()
	c := sc.a.(*array.Dictionary)
	d := c.Dictionary()
	dvals := make([]string, d.Len())
	for k := range dvals {
		v, err := strAt(d, k)
		if err != nil {
			return false
		}
		dvals[k] = internStr(intern, v)
	}
	sc.dict, sc.dvals = c, dvals
	return true
}

// internStr returns the one copy of v in m, adding a copy of v (which may
// alias a batch) if there is none.
func internStr(m map[string]string, v string) string {
	if s, ok := m[v]; ok {
		return s
	}
	v = strings.Clone(v)
	m[v] = v
	return v
}

// at returns cell i ("" for null or absent), as strAt does.
func (sc *strCol) at(i int) (string, error) {
	if sc.a == nil || sc.a.IsNull(i) {
		return "", nil
	}
	switch {
	case sc.err != nil:
		return "", sc.err
	case sc.intern != nil:
		v, err := strAt(sc.a, i)
		if err != nil {
			return "", err
		}
		return internStr(sc.intern, v), nil
	case sc.dict != nil:
		k := sc.dict.GetValueIndex(i)
		if k < 0 || k >= len(sc.dvals) {
			return "", fmt.Errorf("dictionary index %d out of range [0, %d)", k, len(sc.dvals))
		}
		return sc.dvals[k], nil
	}
	var lo, hi int64
	if sc.o64 != nil {
		lo, hi = sc.o64[i]-sc.o64[0], sc.o64[i+1]-sc.o64[0]
	} else {
		lo, hi = int64(sc.o32[i]-sc.o32[0]), int64(sc.o32[i+1]-sc.o32[0])
	}
	if lo < 0 || lo > hi || hi > int64(len(sc.vals)) {
		return "", fmt.Errorf("string offsets %d..%d out of range [0, %d]", lo, hi, len(sc.vals))
	}
	return sc.vals[lo:hi], nil
}

// intAt returns an integer cell and whether it is set.
func intAt(a arrow.Array, i int) (int64, bool, error) {
	if a == nil || a.IsNull(i) {
		return 0, false, nil
	}
	switch c := a.(type) {
	case *array.Int64:
		return c.Value(i), true, nil
	case *array.Int32:
		return int64(c.Value(i)), true, nil
	case *array.Int16:
		return int64(c.Value(i)), true, nil
	case *array.Uint32:
		return int64(c.Value(i)), true, nil
	case *array.Timestamp:
		v := int64(c.Value(i))
		switch c.DataType().(*arrow.TimestampType).Unit {
		case arrow.Millisecond:
			v /= 1e3
		case arrow.Microsecond:
			v /= 1e6
		case arrow.Nanosecond:
			v /= 1e9
		}
		return v, true, nil
	}
	return 0, false, fmt.Errorf("column type %s, want an integer or a timestamp", a.DataType())
}

// appendJobs appends the jobs of rec to t; intern holds the strings
// interned so far in this read (see strCol).
func appendJobs(t *workload.Trace, rec arrow.RecordBatch, path string, row *int, intern map[string]string) error {
	names := ArrowSchema(nil).Fields()
	cols := make([]arrow.Array, numArrowCols)
	for c := range cols {
		cols[c] = column(rec, names[c].Name)
	}
	for _, c := range []int{acID, acSubmit} {
		if cols[c] == nil {
			return &ParseError{Path: path, Line: 1, Field: names[c].Name, Err: errKind(ErrMissingColumn, "no "+names[c].Name+" column")}
		}
	}
	strs := make([]strCol, numArrowCols)
	for _, c := range []int{acID, acName, acArrayJobID} {
		strs[c] = newStrCol(cols[c], intern, false)
	}
	// Few distinct values, even where a file does not dictionary-encode them.
	for _, c := range []int{acUser, acAccount, acPartition, acQOS, acState, acGPUType, acMIG} {
		strs[c] = newStrCol(cols[c], intern, true)
	}
	deps, extra := newListCol(cols[acDeps], intern, false), newListCol(cols[acExtra], intern, true)
	n := int(rec.NumRows())
	for i := 0; i < n; i++ {
		*row++
		var cerr error
		var cname string
		s := func(c int) string {
			v, err := strs[c].at(i)
			if err != nil && cerr == nil {
				cerr, cname = err, names[c].Name
			}
			return v
		}
		in := func(c int, unknown int64) int64 {
			v, ok, err := intAt(cols[c], i)
			if err != nil && cerr == nil {
				cerr, cname = err, names[c].Name
			}
			if !ok {
				return unknown
			}
			return v
		}
		// Times and durations beyond maxSeconds, as the text readers
		// bound them: the simulator's clock and reports pack time.
		var terr string
		var tval int64
		tm := func(c int, unknown int64) int64 {
			v := in(c, unknown)
			if v != unknown && (v > maxSeconds || v < -maxSeconds) && terr == "" {
				terr, tval = names[c].Name, v
			}
			return v
		}
		j := workload.NewJob(s(acID))
		if j.ID == "" {
			return &ParseError{Path: path, Line: *row, Field: "id", Err: errKind(ErrSyntax, "empty job id")}
		}
		j.Name = s(acName)
		j.User = s(acUser)
		j.Account = s(acAccount)
		j.Partition = s(acPartition)
		j.QOS = s(acQOS)
		j.ArrayJobID = s(acArrayJobID)
		j.ArrayTaskID = int32(in(acArrayTaskID, -1))
		j.Submit = workload.Time(tm(acSubmit, 0) - t.Epoch)
		j.TimeLimit = workload.Time(tm(acTimeLimit, -1))
		j.Runtime = workload.Time(tm(acRuntime, 0))
		j.CancelAfter = workload.Time(tm(acCancelAfter, -1))
		j.TraceState = s(acState)
		if v := tm(acStart, -1<<62); v != -1<<62 {
			j.TraceStart = workload.Time(v - t.Epoch)
		}
		if v := tm(acEnd, -1<<62); v != -1<<62 {
			j.TraceEnd = workload.Time(v - t.Epoch)
		}
		j.Request.Nodes = int32(in(acNodes, 0))
		j.Request.GPUs = int32(in(acGPUs, 0))
		j.Request.GPUType = s(acGPUType)
		j.Request.CPUs = int32(in(acCPUs, 0))
		j.Request.MemMB = in(acMem, 0)
		j.Request.MPSShare = int32(in(acMPS, 0))
		if v := s(acMIG); v != "" {
			p, err := workload.ParseMIGProfile(v)
			if err != nil {
				return &ParseError{Path: path, Line: *row, Field: "mig_profile", Value: v, Err: errKind(ErrSyntax, "want a MIG profile name such as 1g.10gb or 3g.40gb+me")}
			}
			j.Request.MIGProfile = p
		}
		j.ArrayThrottle = int32(in(acThrottle, 0))
		ck := tm(acCheckpoint, 0)
		if ck < 0 || ck > workload.MaxCheckpointInterval {
			return &ParseError{Path: path, Line: *row, Field: "checkpoint_interval", Value: strconv.FormatInt(ck, 10), Err: errKind(ErrRange, fmt.Sprintf("want 0 to %d seconds", workload.MaxCheckpointInterval))}
		}
		j.CheckpointInterval = int32(ck)
		if a, ok := cols[acRequeue].(*array.Boolean); ok && a.IsValid(i) {
			j.Requeue = a.Value(i)
		}
		sw, swWait := in(acSwitches, 0), in(acSwitchWait, 0)
		if sw < 0 || sw > math.MaxUint8 {
			return &ParseError{Path: path, Line: *row, Field: "switches", Value: strconv.FormatInt(sw, 10), Err: errKind(ErrRange, "want 0 to 255 leaf switches (sbatch --switches=N)")}
		}
		if swWait < 0 || swWait > math.MaxUint16 {
			return &ParseError{Path: path, Line: *row, Field: "switch_wait", Value: strconv.FormatInt(swWait, 10), Err: errKind(ErrRange, "want 0 to 65535 seconds (sbatch --switches=N@T)")}
		}
		j.Request.Switches, j.Request.SwitchWait = uint8(sw), uint16(swWait)
		if cerr == nil {
			cerr, cname = deps.cell(i, func(a, b string) error {
				dt, ok := depTypes[a]
				if !ok {
					return fmt.Errorf("dependency type %q", a)
				}
				j.Deps = append(j.Deps, workload.Dependency{Type: dt, JobID: b})
				return nil
			}), "deps"
		}
		if cerr == nil {
			cerr, cname = extra.cell(i, func(a, b string) error {
				j.Extra = append(j.Extra, workload.Field{Name: a, Value: b})
				return nil
			}), "extra"
		}
		if cerr != nil {
			return &ParseError{Path: path, Line: *row, Field: cname, Err: syntaxErr(cerr)}
		}
		if terr != "" {
			return &ParseError{Path: path, Line: *row, Field: terr, Value: strconv.FormatInt(tval, 10), Err: errKind(ErrRange, fmt.Sprintf("want seconds within ±%d", int64(maxSeconds)))}
		}
		if j.Request.MPSShare < 0 {
			return &ParseError{Path: path, Line: *row, Field: "mps_share", Value: strconv.Itoa(int(j.Request.MPSShare)), Err: errKind(ErrRange, "must be >= 0")}
		}
		if j.Runtime < 0 {
			return &ParseError{Path: path, Line: *row, Field: "runtime", Value: strconv.FormatInt(int64(j.Runtime), 10), Err: errKind(ErrRange, "must be >= 0")}
		}
		t.Jobs = append(t.Jobs, j)
	}
	return nil
}

var depTypes = map[string]workload.DepType{
	"after": workload.DepAfter, "afterany": workload.DepAfterAny, "afterok": workload.DepAfterOK,
	"afternotok": workload.DepAfterNotOK, "singleton": workload.DepSingleton,
}

// listCol is a list<struct<utf8, utf8>> column of one batch, whose
// strings are read as strCol reads them; internFirst interns the first
// strings (the extra columns' names, which every job repeats).
type listCol struct {
	a    arrow.Array
	err  error // not a list of pairs: reported at its first non-null cell
	l    *array.List
	x, y strCol
}

func newListCol(a arrow.Array, intern map[string]string, internFirst bool) listCol {
	lc := listCol{a: a}
	if a == nil {
		return lc
	}
	l, ok := a.(*array.List)
	if !ok {
		lc.err = fmt.Errorf("column type %s, want list<struct<utf8, utf8>>", a.DataType())
		return lc
	}
	st, ok := l.ListValues().(*array.Struct)
	if !ok || st.NumField() < 2 {
		lc.err = fmt.Errorf("column type %s, want list<struct<utf8, utf8>>", a.DataType())
		return lc
	}
	lc.l, lc.x, lc.y = l, newStrCol(st.Field(0), intern, internFirst), newStrCol(st.Field(1), intern, false)
	return lc
}

// cell calls f for each (first, second) string pair of cell i.
func (lc *listCol) cell(i int, f func(a, b string) error) error {
	if lc.a == nil || lc.a.IsNull(i) {
		return nil
	}
	if lc.err != nil {
		return lc.err
	}
	lo, hi := lc.l.ValueOffsets(i)
	for k := int(lo); k < int(hi); k++ {
		x, err := lc.x.at(k)
		if err != nil {
			return err
		}
		y, err := lc.y.at(k)
		if err != nil {
			return err
		}
		if err := f(x, y); err != nil {
			return err
		}
	}
	return nil
}
