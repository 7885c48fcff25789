package traces

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// BenchmarkSWFRead1M reads a 1,000,000-job SWF log (the size of the
// bench-data trace) in one pass.
func BenchmarkSWFRead1M(b *testing.B) {
	const jobs = 1_000_000
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
	b.ReportMetric(float64(jobs)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkCSVRead reads an Eagle-shaped CSV export through the eagle
// preset.
func BenchmarkCSVRead(b *testing.B) {
	const jobs = 100_000
	var buf bytes.Buffer
	buf.WriteString("job_id,user,account,partition,qos,wallclock_req,nodes_req,processors_req,gpus_req,mem_req,submit_time,start_time,end_time,run_time,state,name,work_dir,submit_line\n")
	for i := range jobs {
		fmt.Fprintf(&buf, "%d,user%04d,account%04d,partition%03d,normal,172800.0,%d,%d,%d,0.0,2019-01-0%d 08:55:55,2019-01-0%d 08:55:56,2019-01-0%d 12:39:41,13425.0,COMPLETED,name%08d,work_dir%08d,submit_line%08d\n",
			500000+i, i%97, i%13, i%7, 1+i%36, 1+i%36, 2*(i%2), 1+i%8, 1+i%8, 1+i%8, i, i%1000, i%100)
	}
	data := buf.Bytes()
	m, _ := CSVPreset(PresetEagle)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		cr, err := NewCSVReader(bytes.NewReader(data), "bench", m, false)
		if err != nil {
			b.Fatal(err)
		}
		n = 0
		for {
			_, err := cr.Next()
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
	b.ReportMetric(float64(jobs)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkReadBenchData reads the 1,000,000-job traces `make bench-data-gpu`
// writes to bench/data (skipped when they are absent): sacct -P and SWF,
// streaming one job at a time, and Parquet, read whole.
func BenchmarkReadBenchData(b *testing.B) {
	for _, bc := range []struct {
		file string
		next func(r io.Reader) (func() error, error)
	}{
		{"gpu-1m.sacct", func(r io.Reader) (func() error, error) {
			sr, err := NewSacctReader(r, "bench", SacctOptions{})
			if err != nil {
				return nil, err
			}
			return func() error { _, err := sr.Next(); return err }, nil
		}},
		{"gpu-1m.swf", func(r io.Reader) (func() error, error) {
			sr, err := NewSWFReader(r, "bench", SWFOptions{})
			if err != nil {
				return nil, err
			}
			return func() error { _, err := sr.Next(); return err }, nil
		}},
		{"gpu-1m.parquet", readParquetJobs},
		{"year-1024x8.parquet", readParquetJobs},
	} {
		b.Run(bc.file, func(b *testing.B) {
			data, err := os.ReadFile(filepath.Join("..", "bench", "data", bc.file))
			if err != nil {
				b.Skipf("run make bench-data-gpu first: %v", err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				next, err := bc.next(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				n = 0
				for {
					err := next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
			}
			if n != 1_000_000 {
				b.Fatalf("read %d jobs, want 1000000", n)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// readParquetJobs reads a whole Parquet trace, then steps through its jobs
// as BenchmarkReadBenchData's streaming readers do.
func readParquetJobs(r io.Reader) (func() error, error) {
	t, err := ReadParquet(r.(ReadAtSeeker), "bench")
	if err != nil {
		return nil, err
	}
	i := 0
	return func() error {
		if i == len(t.Jobs) {
			return io.EOF
		}
		i++
		return nil
	}, nil
}

// BenchmarkSacctReadWhole: Read of the same sacct text, which adds the
// first pass that finds repeated records (no JobID repeats here, so one
// extra pass that only splits the lines) and collects and sorts the jobs.
func BenchmarkSacctReadWhole(b *testing.B) {
	const jobs = 20000
	data := benchSacct(jobs)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		res, err := Read(bytes.NewReader(data), "bench", Options{Sacct: SacctOptions{Fields: JobinfoFields}})
		if err != nil {
			b.Fatal(err)
		}
		n = len(res.Trace.Jobs)
	}
	if n != jobs {
		b.Fatalf("read %d jobs, want %d", n, jobs)
	}
	b.ReportMetric(float64(jobs)*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}
