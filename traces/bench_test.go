package traces

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// benchSacct builds a headerless, "☃"-delimited dump in the shape of the
// Hábrók fixture (JobinfoFields): n jobs, each with .batch and .extern
// steps.
func benchSacct(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		id := 8000000 + i
		fmt.Fprintf(&b, "%d☃J%06d☃user%d☃gpumedium☃a100gpu%d☃1☃8☃☃COMPLETED☃2024-04-0%dT10:00:00☃2024-04-0%dT10:05:00☃2024-04-0%dT12:05:00☃1-00:00:00☃02:00:00☃01:59:00☃16:00:00☃01:50:00☃00:09:00☃32G☃☃☃billing=8,cpu=8,gres/gpu=1,mem=32G,node=1☃billing=8,cpu=8,gres/gpu:a100=1,gres/gpu=1,mem=32G,node=1☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃\n",
			id, i, i%97, i%8, 1+i%9, 1+i%9, 1+i%9)
		for _, step := range []string{"batch", "extern"} {
			fmt.Fprintf(&b, "%d.%s☃%s☃☃☃a100gpu%d☃1☃8☃1☃COMPLETED☃2024-04-0%dT10:05:00☃2024-04-0%dT10:05:00☃2024-04-0%dT12:05:00☃☃02:00:00☃01:59:00☃16:00:00☃01:50:00☃00:09:00☃☃1294440K☃2000000K☃☃cpu=8,gres/gpu:a100=1,gres/gpu=1,mem=32G,node=1☃cpu=00:00:00,energy=0,fs/disk=891.26M☃cpu=00:00:00☃energy=0,fs/disk=1M☃891.26M☃1M☃a100gpu%d☃0☃a100gpu%d☃0☃a100gpu%d☃0☃a100gpu%d☃0☃☃\n",
				id, step, step, i%8, 1+i%9, 1+i%9, 1+i%9, i%8, i%8, i%8, i%8)
		}
	}
	return b.Bytes()
}

// benchSWF builds an SWF log like the CTC fixture: a header and n records.
func benchSWF(n int) []byte {
	var b bytes.Buffer
	b.WriteString("; Version: 2.2\n; UnixStartTime: 835823160\n; MaxNodes: 338 (batch partition; 512 total)\n; MaxProcs: 338\n")
	for i := range n {
		fmt.Fprintf(&b, "%5d %8d %6d %6d %4d %6d.00    -1   -1  %5d    -1  1  %3d  -1 %3d  %d -1 -1 -1\n",
			i+1, i*60, 100+i%5000, 50+i%40000, 1+i%300, i%30000, 35100, i%200, i%400, 1+i%4)
	}
	return b.Bytes()
}

func BenchmarkSacctRead(b *testing.B) {
	const jobs = 20000
	data := benchSacct(jobs)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		sr, err := NewSacctReader(bytes.NewReader(data), "bench", SacctOptions{Fields: JobinfoFields})
		if err != nil {
			b.Fatal(err)
		}
		n = 0
		for {
			j, err := sr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if j.Request.GPUs != 1 {
				b.Fatalf("job %s: %d GPUs", j.ID, j.Request.GPUs)
			}
			n++
		}
		if st := sr.Stats(); st.StepsFolded != 2*jobs {
			b.Fatalf("folded %d steps, want %d", st.StepsFolded, 2*jobs)
		}
	}
	if n != jobs {
		b.Fatalf("read %d jobs, want %d", n, jobs)
	}
	b.ReportMetric(float64(jobs)*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

func BenchmarkSWFRead(b *testing.B) {
	const jobs = 50000
	data := benchSWF(jobs)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		sr, err := NewSWFReader(bytes.NewReader(data), "bench", SWFOptions{})
		if err != nil {
			b.Fatal(err)
		}
		n = 0
		for {
			_, err := sr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	if n != jobs {
		b.Fatalf("read %d jobs, want %d", n, jobs)
	}
	b.ReportMetric(float64(jobs)*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}
