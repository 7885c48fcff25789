package traces

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/schedsim/schedsim/workload"
)

// TestBadRows: malformed rows give errors naming the file, line and field,
// and --skip-bad-rows (Lenient) counts them instead.
func TestBadRows(t *testing.T) {
	tests := []struct {
		name   string
		format string
		opts   Options
		in     string
		want   string // the strict error
		kind   error
	}{
		{"eagle bad number", FormatEagle, Options{},
			"job_id,user,account,partition,qos,wallclock_req,nodes_req,processors_req,gpus_req,mem_req,submit_time,start_time,end_time,run_time,state,name,work_dir,submit_line\n" +
				"1,u,a,p,normal,3600.0,1,1,0,0.0,2019-01-01 08:00:00,2019-01-01 08:00:01,2019-01-01 09:00:01,3600.0,COMPLETED,n,w,s\n" +
				"2,u,a,p,normal,3600.0,x,1,0,0.0,2019-01-01 08:00:00,2019-01-01 08:00:01,2019-01-01 09:00:01,3600.0,COMPLETED,n,w,s\n",
			`f:3: nodes_req: "x": want a number`, ErrSyntax},
		{"eagle bad time", FormatEagle, Options{},
			"job_id,user,account,partition,qos,wallclock_req,nodes_req,processors_req,gpus_req,mem_req,submit_time,start_time,end_time,run_time,state,name,work_dir,submit_line\n" +
				"2,u,a,p,normal,3600.0,1,1,0,0.0,2019-13-01 08:00:00,2019-01-01 08:00:01,2019-01-01 09:00:01,3600.0,COMPLETED,n,w,s\n",
			`f:2: submit_time: "2019-13-01 08:00:00": no such date or time of day`, ErrRange},
		{"csv field count", FormatHelios, Options{},
			"job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n1,u,v,1,1,1\n",
			`f:2: 6 fields, want 12 as in the header`, ErrFieldCount},
		{"alibaba bad gpu", FormatAlibaba, Options{},
			"name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n" +
				"p0,1000,10,1,1000,,LS,Running,0,10,0\np1,1000,10,-1,1000,,LS,Running,0,10,0\n",
			`f:3: num_gpu: "-1": want a whole number from 0 to 2147483647`, ErrRange},
		{"alibaba bad phase", FormatAlibaba, Options{},
			"name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n" +
				"p1,1000,10,1,1000,,LS,Sleeping,0,10,0\n",
			`f:2: pod_phase: "Sleeping": want Succeeded, Failed, Running or Pending`, ErrSyntax},
		{"philly bad time", FormatPhilly, Options{},
			"[\n{\"jobid\": \"a\", \"submitted_time\": \"2017-10-07 01:11:39\", \"attempts\": []},\n{\"jobid\": \"b\",\n \"submitted_time\": \"yesterday\"}\n]\n",
			`f:3: submitted_time: "yesterday": want YYYY-MM-DDTHH:MM:SS, Unknown or None`, ErrSyntax},
		{"swf bad field", FormatSWF, Options{},
			"; UnixStartTime: 0\n1 0 1 10 1 -1 -1 1 100 -1 1 1 -1 -1 -1 -1 -1 -1\n2 5 1 x 1 -1 -1 1 100 -1 1 1 -1 -1 -1 -1 -1 -1\n",
			`f:3: run_time: "x": want a number`, ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts
			o.Format = tt.format
			_, err := Read(strings.NewReader(tt.in), "f", o)
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, tt.kind) {
				t.Fatalf("error %v, want a *ParseError wrapping %v", err, tt.kind)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error\n%s\nwant\n%s", err, tt.want)
			}
			o.Lenient = true
			res, err := Read(strings.NewReader(tt.in), "f", o)
			if err != nil {
				t.Fatalf("lenient: %v", err)
			}
			if res.Bad != 1 || res.SkippedBy["bad row"] != 1 {
				t.Errorf("lenient: bad %d, skipped %v; want 1 bad row", res.Bad, res.SkippedBy)
			}
			if !strings.Contains(strings.Join(res.Trace.Notes, "\n"), tt.want) {
				t.Errorf("lenient notes do not quote the error:\n%s", strings.Join(res.Trace.Notes, "\n"))
			}
		})
	}
}

// TestCSVSentinels: values standing for "none" are taken as absent and
// counted, not turned into absurd jobs.
func TestCSVSentinels(t *testing.T) {
	res, err := Open("testdata/csv_sentinels.csv", Options{Format: FormatCSV, CSV: sentinelMap})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"start unknown": 2, "end unknown": 1, "limit infinite": 2, "gpus empty": 1, "mem empty": 1,
		"mem lost": 1, "mem unknown": 1, "submit empty": 1}
	if diff := cmp.Diff(want, res.Sentinels); diff != "" {
		t.Errorf("sentinels (-want +got):\n%s", diff)
	}
	if res.SkippedBy["no submit time"] != 1 || len(res.Trace.Jobs) != 4 {
		t.Errorf("%d jobs, skipped %v; want 4 and 1 without a submit time", len(res.Trace.Jobs), res.SkippedBy)
	}
	byID := map[string]workload.Job{}
	for _, j := range res.Trace.Jobs {
		byID[j.ID] = j
	}
	if j := byID["1"]; j.TimeLimit != 3600 || j.Runtime != 3600 || j.Request.GPUs != 2 || j.Request.MemMB != 16384 {
		t.Errorf("job 1 = %+v", j)
	}
	if j := byID["2"]; j.TimeLimit != workload.Unknown || j.TraceStart != workload.Unknown || j.Runtime != 0 {
		t.Errorf("job 2 (pending, infinite limit) = %+v", j)
	}
	if j := byID["3"]; j.Request.MemMB != 0 || j.TimeLimit != workload.Unknown {
		t.Errorf("job 3 (lost memory) = %+v", j)
	}
	if j := byID["5"]; !j.CancelledPending() || j.CancelAfter != 100 {
		t.Errorf("job 5 (cancelled while pending) = %+v", j)
	}
}

// TestSWFPartialExecutions: partial-execution records (status 2, 3, 4)
// are folded into their job: into the summary line when there is one,
// else the parts make the job (runtimes summed, the last part's end and
// outcome).
func TestSWFPartialExecutions(t *testing.T) {
	in := "; UnixStartTime: 1000\n; TimeZoneString: Europe/Stockholm\n" +
		// Job 1: a summary line and its two parts.
		"1 0 10 300 4 -1 -1 4 1000 -1 1 1 -1 -1 1 -1 -1 -1\n" +
		"1 0 10 100 4 -1 -1 4 1000 -1 2 1 -1 -1 1 -1 -1 -1\n" +
		"1 0 200 200 4 -1 -1 4 1000 -1 3 1 -1 -1 1 -1 -1 -1\n" +
		// Job 2: parts only, the last one failed.
		"2 50 5 60 2 -1 -1 2 1000 -1 2 2 -1 -1 1 -1 -1 -1\n" +
		"2 50 100 40 2 -1 -1 2 1000 -1 4 2 -1 -1 1 -1 -1 -1\n" +
		"3 60 1 10 1 -1 -1 1 100 -1 1 3 -1 -1 1 -1 -1 -1\n"
	res, err := Read(strings.NewReader(in), "p.swf", Options{})
	if err != nil {
		t.Fatal(err)
	}
	jobs := res.Trace.Jobs
	if len(jobs) != 3 || res.SkippedBy["partial execution folded into its job"] != 3 {
		t.Fatalf("%d jobs, skipped %v; want 3 jobs and 3 folded records", len(jobs), res.SkippedBy)
	}
	if j := jobs[0]; j.ID != "1" || j.Runtime != 300 || j.TraceState != "COMPLETED" {
		t.Errorf("job 1 = %+v", j)
	}
	if j := jobs[1]; j.ID != "2" || j.Runtime != 100 || j.TraceState != "FAILED" || j.TraceStart != 55 || j.TraceEnd != 50+100+40 {
		t.Errorf("job 2 = %+v", j)
	}
	if res.Trace.TimeZone != "Europe/Stockholm" {
		t.Errorf("time zone %q", res.Trace.TimeZone)
	}
}
