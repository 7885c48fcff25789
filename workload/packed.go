package workload

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"unsafe"
)

// Packed holds a trace's jobs encoded, about 50 bytes a job where a Job
// takes 288, so a run of 10 M jobs fits in 4 GB (issue 16). Each job is
// a sequence of varints; strings that jobs share (user, account,
// partition, QOS, name, state, GPU type, array ID, extra column names)
// are indices into one table, the rest (job IDs, dependency targets,
// extra values) are stored inline. Jobs are appended in order and read
// back by index; a Packed is not changed once built (Edit builds a new
// one), so a decoded job's inline strings point into its blocks.
type Packed struct {
	blocks []*packBlk
	n      int
	syms   []string // index 0 is ""
	symIx  map[string]uint32
	buf    []byte
}

// packBlk holds packBlock jobs: their encodings, and where each starts.
type packBlk struct {
	base Time // the first job's submit: the others' are stored relative to it
	data []byte
	off  [packBlock]uint32
}

// packBlock is how many jobs share a block: a block grows by append
// while it fills, so only the last one is ever copied, and 4,096 jobs
// of about 50 bytes keep that copy small.
const packBlock = 4096

// maxSyms bounds the shared-string table: past it, new strings are
// stored inline, so a trace whose every job has its own name does not
// grow a map entry per job.
const maxSyms = 1 << 20

// NewPacked returns an empty Packed.
func NewPacked() *Packed {
	return &Packed{syms: []string{""}, symIx: map[string]uint32{"": 0}}
}

// Len returns the number of jobs.
func (p *Packed) Len() int { return p.n }

// Bytes returns the memory the encoded jobs and their offsets take.
func (p *Packed) Bytes() int64 {
	var n int64
	for _, b := range p.blocks {
		n += int64(unsafe.Sizeof(*b)) + int64(cap(b.data))
	}
	return n
}

// Append encodes j as the next job.
func (p *Packed) Append(j *Job) {
	if p.n%packBlock == 0 {
		p.blocks = append(p.blocks, &packBlk{base: j.Submit})
	}
	blk := p.blocks[p.n/packBlock]
	b := p.buf[:0]
	b = p.str(b, j.ID, false)
	b = p.str(b, j.Name, true)
	b = p.str(b, j.User, true)
	b = p.str(b, j.Account, true)
	b = p.str(b, j.Partition, true)
	b = p.str(b, j.QOS, true)
	b = p.str(b, j.ArrayJobID, true)
	b = binary.AppendVarint(b, int64(j.ArrayTaskID))
	b = binary.AppendVarint(b, int64(j.ArrayThrottle))
	r := &j.Request
	b = binary.AppendVarint(b, int64(r.Nodes))
	b = binary.AppendVarint(b, int64(r.GPUs))
	b = p.str(b, r.GPUType, true)
	b = binary.AppendVarint(b, int64(r.CPUs))
	b = binary.AppendUvarint(b, uint64(r.MIGProfile))
	b = binary.AppendVarint(b, r.MemMB)
	b = binary.AppendVarint(b, int64(r.MPSShare))
	b = binary.AppendUvarint(b, uint64(r.Switches))
	b = binary.AppendUvarint(b, uint64(r.SwitchWait))
	b = binary.AppendVarint(b, int64(j.Submit-blk.base))
	b = binary.AppendVarint(b, int64(j.TimeLimit))
	b = binary.AppendVarint(b, int64(j.Runtime))
	b = binary.AppendVarint(b, int64(j.CancelAfter))
	b = binary.AppendVarint(b, int64(j.CheckpointInterval))
	var flags uint64
	if j.Requeue {
		flags |= 1
	}
	if j.EndEarly {
		flags |= 2
	}
	if j.TraceStart != Unknown {
		flags |= 4
	}
	if j.TraceEnd != Unknown {
		flags |= 8
	}
	b = binary.AppendUvarint(b, flags)
	b = binary.AppendVarint(b, int64(j.KillWait))
	b = p.str(b, j.TraceState, true)
	if j.TraceStart != Unknown {
		b = binary.AppendVarint(b, int64(j.TraceStart-j.Submit))
	}
	if j.TraceEnd != Unknown {
		b = binary.AppendVarint(b, int64(j.TraceEnd-j.Submit))
	}
	b = binary.AppendUvarint(b, uint64(len(j.Deps)))
	for _, d := range j.Deps {
		b = append(b, byte(d.Type))
		b = p.str(b, d.JobID, false)
	}
	b = binary.AppendUvarint(b, uint64(len(j.Extra)))
	for _, f := range j.Extra {
		b = p.str(b, f.Name, true)
		b = p.str(b, f.Value, false)
	}
	p.buf = b
	blk.off[p.n%packBlock] = uint32(len(blk.data))
	blk.data = append(blk.data, b...)
	p.n++
	if p.n%packBlock == 0 {
		blk.data = append([]byte(nil), blk.data...) // no spare capacity in a full block
	}
}

// str encodes s: 2·k for shared string k, 2·len+1 and the bytes inline.
func (p *Packed) str(b []byte, s string, share bool) []byte {
	if k, ok := p.symIx[s]; ok {
		return binary.AppendUvarint(b, uint64(k)<<1)
	}
	if share && len(p.syms) < maxSyms {
		k := uint32(len(p.syms))
		p.syms = append(p.syms, s)
		p.symIx[s] = k
		return binary.AppendUvarint(b, uint64(k)<<1)
	}
	b = binary.AppendUvarint(b, uint64(len(s))<<1|1)
	return append(b, s...)
}

// errPacked is a decoding error: the encoding is the package's own, so
// it means memory corruption or a bug, never bad input.
var errPacked = errors.New("workload: corrupt packed job")

// Job decodes job i into dst. dst's inline strings point into p, which
// stays unchanged; its Deps and Extra are fresh slices.
func (p *Packed) Job(i int, dst *Job) {
	if err := p.decode(i, dst); err != nil {
		panic(fmt.Sprintf("%v %d: %v", errPacked, i, err))
	}
}

// At returns job i.
func (p *Packed) At(i int) Job {
	var j Job
	p.Job(i, &j)
	return j
}

// Submit returns job i's submit time, decoding only what precedes it.
func (p *Packed) Submit(i int) Time {
	var j Job
	d := p.reader(i)
	p.head(&d, &j)
	return p.blocks[i/packBlock].base + Time(d.varint())
}

type packReader struct {
	b   []byte
	err error
}

func (d *packReader) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errPacked
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a list length, bounded by the bytes left (each entry takes
// at least one) so a corrupt block cannot make a huge allocation; past the
// bound it marks the reader bad and returns 0.
func (d *packReader) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.err = errPacked
		d.b = nil
		return 0
	}
	return int(n)
}

// varint undoes binary.PutVarint's zig-zag encoding.
func (d *packReader) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (d *packReader) int32() int32 {
	v := d.varint()
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.err = errPacked
	}
	return int32(v)
}

func (p *Packed) reader(i int) packReader {
	blk := p.blocks[i/packBlock]
	k := i % packBlock
	end := uint32(len(blk.data))
	if k+1 < packBlock && i+1 < p.n {
		end = blk.off[k+1]
	}
	return packReader{b: blk.data[blk.off[k]:end]}
}

func (p *Packed) sym(d *packReader) string {
	k := d.uvarint()
	if k&1 == 0 {
		if k>>1 >= uint64(len(p.syms)) {
			d.err = errPacked
			return ""
		}
		return p.syms[k>>1]
	}
	n := k >> 1
	if n > uint64(len(d.b)) {
		d.err = errPacked
		d.b = nil
		return ""
	}
	s := unsafe.String(unsafe.SliceData(d.b), int(n))
	if n == 0 {
		s = ""
	}
	d.b = d.b[n:]
	return s
}

// head decodes the fields before Submit.
func (p *Packed) head(d *packReader, j *Job) {
	j.ID = p.sym(d)
	j.Name = p.sym(d)
	j.User = p.sym(d)
	j.Account = p.sym(d)
	j.Partition = p.sym(d)
	j.QOS = p.sym(d)
	j.ArrayJobID = p.sym(d)
	j.ArrayTaskID = d.int32()
	j.ArrayThrottle = d.int32()
	r := &j.Request
	r.Nodes = d.int32()
	r.GPUs = d.int32()
	r.GPUType = p.sym(d)
	r.CPUs = d.int32()
	r.MIGProfile = MIGProfile(d.uvarint())
	r.MemMB = d.varint()
	r.MPSShare = d.int32()
	r.Switches = uint8(d.uvarint())
	r.SwitchWait = uint16(d.uvarint())
}

func (p *Packed) decode(i int, j *Job) error {
	d := p.reader(i)
	p.head(&d, j)
	j.Submit = p.blocks[i/packBlock].base + Time(d.varint())
	j.TimeLimit = Time(d.varint())
	j.Runtime = Time(d.varint())
	j.CancelAfter = Time(d.varint())
	j.CheckpointInterval = d.int32()
	flags := d.uvarint()
	j.Requeue = flags&1 != 0
	j.EndEarly = flags&2 != 0
	j.KillWait = int16(d.varint())
	j.TraceState = p.sym(&d)
	j.TraceStart, j.TraceEnd = Unknown, Unknown
	if flags&4 != 0 {
		j.TraceStart = j.Submit + Time(d.varint())
	}
	if flags&8 != 0 {
		j.TraceEnd = j.Submit + Time(d.varint())
	}
	j.Deps = nil
	if n := d.count(); n > 0 {
		j.Deps = make([]Dependency, n)
		for k := range j.Deps {
			if len(d.b) == 0 {
				return errPacked
			}
			j.Deps[k].Type = DepType(d.b[0])
			d.b = d.b[1:]
			j.Deps[k].JobID = p.sym(&d)
		}
	}
	j.Extra = nil
	if n := d.count(); n > 0 {
		j.Extra = make([]Field, n)
		for k := range j.Extra {
			j.Extra[k].Name = p.sym(&d)
			j.Extra[k].Value = p.sym(&d)
		}
	}
	if d.err == nil && len(d.b) != 0 {
		return errPacked
	}
	return d.err
}

// Pack encodes jobs.
func Pack(jobs []Job) *Packed {
	p := NewPacked()
	for i := range jobs {
		p.Append(&jobs[i])
	}
	return p
}

// Unpack decodes every job.
func (p *Packed) Unpack() []Job {
	jobs := make([]Job, p.Len())
	for i := range jobs {
		p.Job(i, &jobs[i])
	}
	return jobs
}

// edit returns p's jobs after f, without those f returned false for.
func (p *Packed) edit(f func(j *Job) bool) *Packed {
	q := p.emptyLike()
	var j Job
	for i := range p.n {
		p.Job(i, &j)
		if f(&j) {
			q.Append(&j)
		}
	}
	return q
}

// emptyLike returns an empty Packed sharing p's string table, so the
// strings p's jobs share keep their indices.
func (p *Packed) emptyLike() *Packed {
	return &Packed{syms: p.syms, symIx: p.symIx}
}

// sortedBySubmit returns p sorted stably by submit time: p itself when
// it is sorted already, as most traces are.
func (p *Packed) sortedBySubmit() *Packed {
	prev, sorted := Time(math.MinInt64), true
	for i := range p.n {
		s := p.Submit(i)
		if s < prev {
			sorted = false
			break
		}
		prev = s
	}
	if sorted {
		return p
	}
	type key struct {
		submit Time
		i      int32
	}
	keys := make([]key, p.n)
	for i := range keys {
		keys[i] = key{p.Submit(i), int32(i)}
	}
	slices.SortStableFunc(keys, func(a, b key) int { return cmp.Compare(a.submit, b.submit) })
	q := p.emptyLike()
	var j Job
	for _, k := range keys {
		p.Job(int(k.i), &j)
		q.Append(&j)
	}
	return q
}

// shift adds d to every job's submit time (its trace start and end
// follow: they are stored relative to it).
func (p *Packed) shift(d Time) {
	for _, b := range p.blocks {
		b.base += d
	}
}
