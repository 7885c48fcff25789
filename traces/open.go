package traces

import (
	"bytes"
	"cmp"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/schedsim/schedsim/workload"
)

// Trace formats, as Options.Format and DetectFormat name them.
const (
	FormatSacct   = "sacct"   // sacct -p/-P output
	FormatSWF     = "swf"     // Standard Workload Format 2.2
	FormatCSV     = "csv"     // a CSV table read through Options.CSV (a CSVMap)
	FormatEagle   = "eagle"   // CSV with the NREL Eagle columns (CSVPreset "eagle")
	FormatHelios  = "helios"  // CSV with the SenseTime Helios columns (CSVPreset "helios")
	FormatAlibaba = "alibaba" // Alibaba GPU cluster pod list (cluster-trace-gpu-v2023)
	FormatPhilly  = "philly"  // Microsoft Philly cluster_job_log (JSON)
	FormatArrow   = "arrow"   // Arrow IPC file in the schema of ArrowSchema
	FormatParquet = "parquet" // Parquet file in the schema of ArrowSchema
)

// formatAlibabaNodes is what DetectFormat calls an Alibaba node list, which
// is not a job trace.
const formatAlibabaNodes = "alibaba-nodes"

// ReadFormats returns the formats Open and Read accept.
func ReadFormats() []string {
	return []string{FormatSacct, FormatSWF, FormatCSV, FormatEagle, FormatHelios, FormatAlibaba, FormatPhilly, FormatArrow, FormatParquet}
}

// Options configures Open and Read.
type Options struct {
	// Format is FormatSacct, FormatSWF, or "" to detect it from the
	// content (DetectFormat).
	Format string
	Sacct  SacctOptions
	SWF    SWFOptions
	// CSV maps the columns of a CSV table (FormatCSV). When its Fields are
	// set, a CSV input whose format is detected or given as FormatCSV is
	// read through it; FormatEagle and FormatHelios use their presets.
	CSV     CSVMap
	Alibaba AlibabaOptions
	// Lenient skips bad lines instead of failing, counts them and notes
	// the first few by position (it sets Sacct.Lenient and SWF.Lenient).
	Lenient bool
	// Limits bound what the read may cost (zero fields: the defaults).
	Limits Limits
	// Head, when above 0, makes Open and Read keep only the first Head
	// jobs in submit order (ties in input order): the jobs Trace.Rebase
	// followed by a cut to Head would keep, and the same epoch. The read
	// still passes over every record, since an input need not be sorted
	// by submit time, but holds at most Head jobs at once (a bounded
	// heap), so a short replay of a long trace takes the memory of the
	// replay, not of the trace. Result.Read counts the jobs before the
	// cut. A Stream ignores Head.
	Head int
	// PackAbove, when above 0, makes Open and Read hold the jobs packed
	// (workload.Packed, Trace.Packed, about 54 bytes a job instead of
	// 296) once more than PackAbove are read (PackAboveForBudget). Only
	// a caller that reads the trace through Trace.Len, At and All may
	// set it. A Stream ignores it.
	PackAbove int
	// NoExtra leaves every job's Extra nil, for a caller that reads no
	// trace column the replay does not interpret (schedsim run: no output
	// shows them). The SWF reader then makes no lists at all; the other
	// formats' readers make theirs as they parse, and a Stream drops them
	// job by job. Every value is parsed and checked as before, so the
	// errors are the same.
	NoExtra bool
}

// Result is a whole trace read by Open or Read, with what callers need
// beyond the jobs.
type Result struct {
	// Trace holds the jobs sorted by submit time, times relative to
	// Trace.Epoch (Unix seconds), with Source and Notes filled in.
	Trace *workload.Trace
	// Format is the format read (FormatSacct or FormatSWF).
	Format string
	// SWF is the SWF header (MaxNodes, MaxProcs, ... describe the machine
	// the log came from); nil for other formats.
	SWF *SWFHeader
	// Skipped counts records that are not jobs: SWF phantoms, orphan
	// sacct steps, pending jobs dropped by SkipPending, duplicate and
	// submit-less CSV rows (folded steps and partial executions are not
	// counted here; SkippedBy has them).
	Skipped int
	// SkippedBy counts every record not taken as a job by reason ("step
	// folded into its job", "orphan step", "no submit time", "duplicate
	// row", "bad row", ...), bad rows (Lenient) included.
	SkippedBy map[string]int
	// Sentinels counts values that stood for "no value" in a CSV table
	// ("limit infinite", "start unknown", "mem empty").
	Sentinels map[string]int
	// Bad counts lines skipped as bad (Lenient only).
	Bad int
	// Read counts the jobs the input held: len(Trace.Jobs), or more
	// when Options.Head cut them.
	Read int
}

func (r *Result) skip(reason string, n int) {
	if n <= 0 {
		return
	}
	if r.SkippedBy == nil {
		r.SkippedBy = map[string]int{}
	}
	r.SkippedBy[reason] += n
}

// gzipMagic starts every gzip stream.
var gzipMagic = []byte{0x1f, 0x8b}

// detectBytes is how much of the input DetectFormat is shown.
const detectBytes = 64 << 10

// Open reads the whole trace file at path, decompressing it when it is
// compressed (by its magic bytes, whatever its name), detecting the format
// when opts.Format is "". Errors in the content are *ParseError naming
// path. See Read for what the result holds.
func Open(path string, opts Options) (*Result, error) {
	s, err := OpenStream(path, opts)
	if err != nil {
		return nil, err
	}
	return readWhole(s)
}

// Read reads a whole trace from r, as Open does for a file; name stands
// for the input in errors and in Trace.Source. The jobs are read with a
// Stream, then Trace.Rebase(0) sorts them by submit time and makes times
// relative to the first submit (Epoch holds its Unix time).
func Read(r io.Reader, name string, opts Options) (*Result, error) {
	s, err := NewStream(r, name, opts)
	if err != nil {
		return nil, err
	}
	return readWhole(s)
}

// readWhole collects the jobs of s into its Result's trace and rebases it.
func readWhole(s *Stream) (*Result, error) {
	defer s.Close()
	var jobs []workload.Job
	var head *headHeap
	if n := s.opts.Head; n > 0 {
		head = &headHeap{n: n}
	}
	// The jobs are collected in chunks, the first as long as the row
	// count Arrow and Parquet state (bounded by the file's size), and
	// copied once into a slice of their exact length when there is more
	// than one: a slice grown by append keeps up to a quarter of its
	// length unused (74 bytes a job).
	hint := s.sizeHint()
	var chunks [][]workload.Job
	var ex extraInterner
	var pk *workload.Packed
	packAt := packAbove(s.opts.PackAbove)
	read := 0
	// from jobs had been read, taking at bytes of the decompressed input,
	// when the second chunk was made (ok: the format counts its bytes).
	var from int
	var at int64
	var ok bool
	var j workload.Job
	for {
		err := s.next(&j)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		read++
		j.Extra = ex.intern(j.Extra)
		switch {
		case head != nil:
			head.offer(j)
		case pk != nil:
			if read%packBlockJobs == 0 {
				if err := reserve(packBlockJobs*packedJobBytes, read); err != nil {
					return nil, s.budgetError(err)
				}
			}
			pk.Append(&j)
		case packAt > 0 && read > packAt:
			pk = workload.NewPacked()
			for k := range chunks {
				for i := range chunks[k] {
					pk.Append(&chunks[k][i])
				}
				chunks[k] = nil
			}
			chunks = nil
			pk.Append(&j)
		default:
			if len(chunks) == 0 || len(chunks[len(chunks)-1]) == cap(chunks[len(chunks)-1]) {
				c := chunkCap(len(chunks))
				if len(chunks) == 0 && hint > 0 {
					c = hint
					if packAt > 0 {
						c = min(c, packAt+1) // the rest is packed
					}
				}
				if len(chunks) == 1 {
					from = read
					at, ok = s.bytesRead()
				}
				est := 0
				if len(chunks) == estimateChunk && ok {
					est = s.estimateJobs(read, from, at)
					if packAt > 0 {
						est = min(est, packAt+1)
					}
				}
				if est > c {
					ex.reserve(est)
					// One slice for the jobs read and all the estimate
					// expects, so that no copy is needed at the end.
					if err := reserve(int64(est)*jobBytes, read); err != nil {
						return nil, s.budgetError(err)
					}
					all := make([]workload.Job, 0, est)
					for k := range chunks {
						all = append(all, chunks[k]...)
						chunks[k] = nil
					}
					chunks = append(chunks[:0], all)
				} else {
					if err := reserve(int64(c)*jobBytes, read); err != nil {
						return nil, s.budgetError(err)
					}
					chunks = append(chunks, make([]workload.Job, 0, c))
				}
			}
			c := &chunks[len(chunks)-1]
			*c = append(*c, j)
		}
	}
	switch {
	case head != nil:
		jobs = head.sorted()
	case len(chunks) == 1 && cap(chunks[0])-len(chunks[0]) <= len(chunks[0])/8+estimateSlack:
		jobs = chunks[0]
	case len(chunks) >= 1:
		n := 0
		for _, c := range chunks {
			n += len(c)
		}
		if err := reserve(int64(n)*jobBytes, read); err != nil {
			return nil, s.budgetError(err)
		}
		jobs = make([]workload.Job, 0, n)
		for k := range chunks {
			jobs = append(jobs, chunks[k]...)
			chunks[k] = nil
		}
	}
	res := s.Result()
	res.Trace.Jobs = jobs
	res.Trace.Packed = pk
	res.Read = read
	res.Trace.Rebase(0)
	return res, nil
}

// packBlockJobs and packedJobBytes size the memory check of a packed
// read: one per that many jobs, of about what they take packed.
const packBlockJobs, packedJobBytes = 4096, 64

// packAbove is the job count above which a read packs its jobs, 0 for
// never (Options.PackAbove).
func packAbove(opt int) int { return max(opt, 0) }

// PackAboveForBudget is the Options.PackAbove for a run under the memory
// budget (SetMemoryBudget): the jobs are packed once holding them as
// Jobs would take more than a quarter of it, 3.6 M jobs under 4 GiB,
// which leaves the rest for the simulation's own state; 0 (never)
// without a budget.
func PackAboveForBudget() int {
	memoryBudget.Lock()
	limit := memoryBudget.limit
	memoryBudget.Unlock()
	if limit <= 0 {
		return 0
	}
	return int(max(1, limit/4/jobBytes))
}

// budgetError places a memory budget's *LimitError at the record the
// read has reached.
func (s *Stream) budgetError(err error) error {
	line := 1
	if s.cur != nil {
		line = max(1, s.cur.line())
	}
	return &ParseError{Path: s.name, Line: line, Err: err, noValue: true}
}

// estimateChunk is the chunk of readWhole (from 0) made, when the input's
// decompressed size is known, as one slice for every job the size
// suggests: the jobs read before it (16+32+64+128 = 240) give the bytes a
// job takes, without the header before them. estimateSlack (plus 1/32 of
// the estimate) is the room left for a file whose later lines are longer;
// a read that outgrows it goes on in chunks and is copied once at the
// end, as without an estimate, and one that falls short by more than an
// eighth is copied into a slice of its length.
const estimateChunk, estimateSlack = 4, 64

// bytesRead returns how many bytes of decompressed input the read has
// taken so far, and false when the format does not count them or the
// input's decompressed size is unknown.
func (s *Stream) bytesRead() (int64, bool) {
	if s.decompressedSize() <= 0 {
		return 0, false
	}
	return s.consumed()
}

// estimateJobs returns how many jobs the whole input holds, judged from
// the bytes the jobs read after the first from took (at bytes had been
// read then) and the decompressed size; 0 when it cannot tell.
func (s *Stream) estimateJobs(read, from int, at int64) int {
	now, ok := s.consumed()
	total := s.decompressedSize()
	if !ok || read <= from || now <= at || total < now {
		return 0
	}
	per := float64(now-at) / float64(read-from)
	est := float64(read) + float64(total-now)/per
	if est > float64(readChunkMax) {
		return 0
	}
	n := int(est)
	return n + n/32 + estimateSlack
}

// readChunkMax bounds an estimate readWhole preallocates for.
const readChunkMax = 1 << 26

// readChunk is the most jobs one chunk of readWhole holds; the first
// chunks are smaller (16, 32, ...), so a short trace wastes little.
const readChunk = 1 << 14

// chunkCap is the capacity of readWhole's chunk k (from 0).
func chunkCap(k int) int {
	if k >= 10 { // 16<<10 = readChunk; a larger shift overflows
		return readChunk
	}
	return 16 << k
}

// extraInterner shares identical Job.Extra lists between the jobs of one
// read: an SWF or sacct trace repeats few combinations of its other
// columns (requested and allocated processors, ReqTRES), and each list
// costs 32 bytes a field plus its slice. It remembers up to
// maxExtraSets lists; a list not among them is kept as it is. The lists
// are found by a hash of their values and compared field by field, so
// that remembering one costs a map entry and no copy of its bytes (an
// SWF log's lists hardly repeat: 14,305 distinct of the HPC2N log's
// 20,000).
type extraInterner struct {
	seed  maphash.Seed
	first map[uint64]int32 // by hash: the latest list remembered with it
	lists [][]workload.Field
	next  []int32 // per list: the one remembered before it with its hash, or -1
	key   []byte  // scratch: the bytes hashed (the values)
}

const maxExtraSets = 1 << 16

// reserve makes room for the lists of n jobs (at most maxExtraSets), so
// that the interner's map and slices are not regrown list by list.
func (x *extraInterner) reserve(n int) {
	n = min(n, maxExtraSets)
	if n <= len(x.lists) {
		return
	}
	first := make(map[uint64]int32, n)
	for k, v := range x.first {
		first[k] = v
	}
	if x.first == nil {
		x.seed = maphash.MakeSeed()
	}
	x.first = first
	x.lists = append(make([][]workload.Field, 0, n), x.lists...)
	x.next = append(make([]int32, 0, n), x.next...)
}

func (x *extraInterner) intern(f []workload.Field) []workload.Field {
	if len(f) == 0 {
		return nil
	}
	if x.first == nil {
		x.seed, x.first = maphash.MakeSeed(), map[uint64]int32{}
	}
	// The hash is of the values alone: lists that differ only in their
	// names share a chain, and the comparison below tells them apart
	// (the names of one format's lists are few and repeat).
	b := x.key[:0]
	for k := range f {
		b = append(b, f[k].Value...)
		b = append(b, 0)
	}
	x.key = b
	k := maphash.Bytes(x.seed, b)
	head, ok := x.first[k]
	if !ok {
		head = -1
	}
	for i := head; i >= 0; i = x.next[i] {
		if slices.Equal(x.lists[i], f) {
			return x.lists[i]
		}
	}
	if len(x.lists) < maxExtraSets {
		f = slices.Clip(f)
		x.first[k] = int32(len(x.lists))
		x.lists = append(x.lists, f)
		x.next = append(x.next, head)
	}
	return f
}

// headHeap keeps the n first jobs in submit order of those offered, ties
// in the order offered: a max-heap by (Submit, seq) whose top is the job
// the next earlier one displaces.
type headHeap struct {
	n    int
	seq  int64
	jobs []workload.Job
	seqs []int64
}

// after reports whether job i of the heap comes after job k in submit
// order.
func (h *headHeap) after(i, k int) bool {
	a, b := h.jobs[i].Submit, h.jobs[k].Submit
	return a > b || (a == b && h.seqs[i] > h.seqs[k])
}

func (h *headHeap) swap(i, k int) {
	h.jobs[i], h.jobs[k] = h.jobs[k], h.jobs[i]
	h.seqs[i], h.seqs[k] = h.seqs[k], h.seqs[i]
}

// offer adds j if it is among the n first so far, dropping the last.
func (h *headHeap) offer(j workload.Job) {
	seq := h.seq
	h.seq++
	if len(h.jobs) < h.n {
		h.jobs = append(h.jobs, j)
		h.seqs = append(h.seqs, seq)
		for i := len(h.jobs) - 1; i > 0; {
			p := (i - 1) / 2
			if !h.after(i, p) {
				break
			}
			h.swap(i, p)
			i = p
		}
		return
	}
	// A later-offered job with the top's submit time comes after it.
	if j.Submit >= h.jobs[0].Submit {
		return
	}
	h.jobs[0], h.seqs[0] = j, seq
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h.jobs) && h.after(l, m) {
			m = l
		}
		if r < len(h.jobs) && h.after(r, m) {
			m = r
		}
		if m == i {
			return
		}
		h.swap(i, m)
		i = m
	}
}

// sorted returns the kept jobs in the order offered; Rebase's stable sort
// then puts them in submit order, ties in that order, as for a whole read.
func (h *headHeap) sorted() []workload.Job {
	idx := make([]int, len(h.jobs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(h.seqs[a], h.seqs[b]) })
	out := make([]workload.Job, len(idx))
	for i, k := range idx {
		out[i] = h.jobs[k]
	}
	return out
}

// wallToZone turns the times of j from wall-clock readings taken as UTC
// into Unix times of the same readings in loc.
func wallToZone(j *workload.Job, loc *time.Location) {
	conv := func(t workload.Time) workload.Time {
		if t == workload.Unknown {
			return t
		}
		u := time.Unix(int64(t), 0).UTC()
		return workload.Time(time.Date(u.Year(), u.Month(), u.Day(), u.Hour(), u.Minute(), u.Second(), 0, loc).Unix())
	}
	j.Submit = conv(j.Submit)
	j.TraceStart = conv(j.TraceStart)
	j.TraceEnd = conv(j.TraceEnd)
}

// shiftJob adds d to every known time of j.
func shiftJob(j *workload.Job, d workload.Time) {
	j.Submit += d
	if j.TraceStart != workload.Unknown {
		j.TraceStart += d
	}
	if j.TraceEnd != workload.Unknown {
		j.TraceEnd += d
	}
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// DetectFormat tells the format of a trace from its first bytes (a gzip,
// zstd, bzip2 or lz4 prefix is decompressed first; xz, lzip, Unix
// compress, zip and 7z are named as unsupported): FormatSWF when the
// first non-blank line is a ';' comment or a record of 18 numbers;
// FormatSacct when a line has a JobID header field, or its first field
// (split at "☃", "|" or a tab) looks like a Slurm job id. Otherwise the
// error wraps ErrUnknownFormat.
func DetectFormat(prefix []byte) (string, error) {
	if c := sniffCompression(prefix); c != nil {
		if c.open == nil {
			return "", errKind(ErrUnknownFormat, fmt.Sprintf("%s-compressed input: not supported, decompress it first (%s)", c.name, c.tool))
		}
		zr, err := c.open(bytes.NewReader(prefix))
		if err != nil {
			return "", errKind(ErrUnknownFormat, "corrupt "+c.name+" data")
		}
		buf := make([]byte, detectBytes)
		n, _ := io.ReadFull(zr, buf)
		zr.Close()
		prefix = buf[:n]
	}
	prefix = bytes.TrimPrefix(prefix, utf8BOM)
	switch {
	case bytes.HasPrefix(prefix, []byte("PAR1")):
		return FormatParquet, nil
	case bytes.HasPrefix(prefix, []byte("ARROW1")):
		return FormatArrow, nil
	}
	if t := bytes.TrimLeft(prefix, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		return FormatPhilly, nil
	}
	for len(prefix) > 0 {
		var line []byte
		if i := bytes.IndexByte(prefix, '\n'); i >= 0 {
			line, prefix = prefix[:i], prefix[i+1:]
		} else {
			line, prefix = prefix, nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] == ';' || isSWFRecord(line) {
			return FormatSWF, nil
		}
		if f := detectCSV(line); f != "" {
			return f, nil
		}
		for _, d := range []string{"☃", "|", "\t", ",", ";"} {
			if !bytes.Contains(line, []byte(d)) {
				continue
			}
			fields := bytes.Split(line, []byte(d))
			if isSacctHeader(fields) {
				return FormatSacct, nil
			}
			if d == "," || d == ";" {
				continue
			}
			if job, _, _ := splitStep(fields[0], nil); len(job) > 0 {
				if _, err := parseJobID(job); err == nil {
					return FormatSacct, nil
				}
			}
		}
		first := line
		if len(first) > 60 {
			first = append(first[:60:60], "..."...)
		}
		return "", errKind(ErrUnknownFormat, fmt.Sprintf("cannot tell the trace format (want sacct -p/-P output, SWF, a CSV with known columns (%s, Alibaba pod list), a Philly JSON job log, Arrow or Parquet; for other CSV give a column map); first line: %q",
			strings.Join(CSVPresets(), ", "), first))
	}
	return "", errKind(ErrUnknownFormat, "cannot tell the trace format of empty input")
}

// isSWFRecord reports whether line is 18 whitespace-separated numbers.
func isSWFRecord(line []byte) bool {
	fields := bytes.Fields(line)
	if len(fields) != 18 {
		return false
	}
	for _, f := range fields {
		if _, err := parseSWFNum(f); err != nil {
			return false
		}
	}
	return true
}

// detectCSV recognises the header row of the CSV tables with known
// columns.
func detectCSV(line []byte) string {
	if bytes.IndexByte(line, ',') < 0 {
		return ""
	}
	cols := map[string]bool{}
	for _, f := range bytes.Split(line, []byte{','}) {
		cols[string(bytes.Trim(bytes.TrimSpace(f), `"`))] = true
	}
	has := func(names ...string) bool {
		for _, n := range names {
			if !cols[n] {
				return false
			}
		}
		return true
	}
	switch {
	case has("name", "gpu_milli", "creation_time"):
		return FormatAlibaba
	case has("sn", "cpu_milli", "gpu", "model"):
		return formatAlibabaNodes
	}
	for _, p := range CSVPresets() {
		m, _ := CSVPreset(p)
		all := true
		for _, c := range m.Fields {
			if !cols[c.Column] {
				all = false
				break
			}
		}
		if all {
			return p
		}
	}
	return ""
}
