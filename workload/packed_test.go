package workload

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
)

// randomJob draws a job whose every field may hold an edge value:
// Unknown times, extremes of each integer type, empty and non-ASCII
// strings, dependencies and extra columns.
func randomJob(r *rand.Rand, i int) Job {
	pick := func(vs ...string) string { return vs[r.IntN(len(vs))] }
	t := func() Time {
		switch r.IntN(5) {
		case 0:
			return Unknown
		case 1:
			return Time(r.Int64N(1 << 40))
		case 2:
			return Time(math.MaxInt64 - r.Int64N(3))
		case 3:
			return Time(math.MinInt64 + r.Int64N(3))
		}
		return Time(r.IntN(100000))
	}
	i32 := func() int32 {
		switch r.IntN(4) {
		case 0:
			return math.MaxInt32
		case 1:
			return math.MinInt32
		}
		return int32(r.IntN(2000)) - 1
	}
	j := NewJob(strconv.Itoa(i) + pick("", "_3", "+0", "_[1-4]"))
	j.Name = pick("", "train", "job"+strconv.Itoa(i), "ü\x00\xff")
	j.User = pick("alice", "bob", "")
	j.Account = pick("physics", "chem", "")
	j.Partition = pick("gpu", "batch,debug", "")
	j.QOS = pick("", "normal", "high")
	j.ArrayJobID = pick("", strconv.Itoa(i/4))
	j.ArrayTaskID = i32()
	j.ArrayThrottle = i32()
	j.Request = Request{Nodes: i32(), GPUs: i32(), GPUType: pick("", "h100", "a100"), CPUs: i32(),
		MIGProfile: MIGProfile(r.Uint32()), MemMB: r.Int64() - r.Int64(), MPSShare: i32(),
		Switches: uint8(r.UintN(256)), SwitchWait: uint16(r.UintN(65536))}
	j.Submit, j.TimeLimit, j.Runtime, j.CancelAfter = t(), t(), t(), t()
	j.TraceStart, j.TraceEnd = t(), t()
	j.CheckpointInterval = i32()
	j.Requeue, j.EndEarly = r.IntN(2) == 0, r.IntN(2) == 0
	j.KillWait = int16(r.IntN(1<<16) - 1<<15)
	j.TraceState = pick("COMPLETED", "FAILED", "", "CANCELLED by 0")
	for range r.IntN(3) {
		j.Deps = append(j.Deps, Dependency{Type: DepType(r.UintN(6)), JobID: strconv.Itoa(r.IntN(i + 1))})
	}
	for range r.IntN(3) {
		j.Extra = append(j.Extra, Field{Name: pick("MaxRSS", "Used"), Value: strconv.Itoa(r.IntN(1 << 30))})
	}
	return j
}

// TestPackedRoundTrip: 20,000 random jobs, more than four blocks, decode
// to exactly what was appended, by index in any order, and Submit reads
// the same time as the whole decode.
func TestPackedRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	jobs := make([]Job, 20000)
	for i := range jobs {
		jobs[i] = randomJob(r, i)
	}
	p := Pack(jobs)
	if p.Len() != len(jobs) {
		t.Fatalf("Len %d, want %d", p.Len(), len(jobs))
	}
	for _, i := range r.Perm(len(jobs)) {
		got := p.At(i)
		if !reflect.DeepEqual(got, jobs[i]) {
			t.Fatalf("job %d:\n got %+v\nwant %+v", i, got, jobs[i])
		}
		if s := p.Submit(i); s != jobs[i].Submit {
			t.Fatalf("job %d: Submit %d, want %d", i, s, jobs[i].Submit)
		}
	}
	if got := p.Unpack(); !reflect.DeepEqual(got, jobs) {
		t.Fatal("Unpack differs from the jobs packed")
	}
}

// TestPackedSize: a year-like job (shared user, account, partition and
// state, a 7-digit ID, Unix times) packs into at most 56 bytes with its
// offset (whole blocks), a fifth of a Job's 288.
func TestPackedSize(t *testing.T) {
	p := NewPacked()
	const n = 4 * packBlock
	for i := range n {
		j := NewJob(strconv.Itoa(1_000_000 + i))
		j.User, j.Account, j.Partition = "u"+strconv.Itoa(i%50), "a"+strconv.Itoa(i%7), "batch"
		j.Request = Request{Nodes: 4, GPUs: 32, CPUs: 448, MemMB: 1 << 20}
		j.Submit = Time(1_700_000_000 + 30*i)
		j.TimeLimit, j.Runtime = 86400, Time(3600+i)
		j.TraceState = "COMPLETED"
		j.TraceStart, j.TraceEnd = j.Submit+600, j.Submit+600+j.Runtime
		p.Append(&j)
	}
	per := float64(p.Bytes()) / n
	t.Logf("%.1f bytes a job", per)
	if per > 56 {
		t.Errorf("%.1f bytes a job, want at most 56", per)
	}
}
