package reports

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// jobsCSVHeader is the header row WriteJobsCSV writes; doc.go describes
// each column.
var jobsCSVHeader = []string{
	"job_id", "user", "partition", "submit_s", "start_s", "end_s", "wait_s",
	"state", "nodes", "gpus", "node_list",
}

// WriteJobsCSV writes one CSV row per job of rec, in JobRef order, after
// a header row; doc.go describes the columns. Fields are quoted
// as encoding/csv quotes them and lines end in "\n". It returns
// CheckRecord's error, naming the job, without writing anything if rec is
// invalid, and otherwise the first write error.
func WriteJobsCSV(w io.Writer, rec *sim.Record) error {
	if err := CheckRecord(rec); err != nil {
		return fmt.Errorf("jobs csv: %w", err)
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(jobsCSVHeader); err != nil {
		return err
	}
	row := make([]string, len(jobsCSVHeader))
	runs := newRunTable(rec)
	hosts := clusterHosts(rec.Cluster)
	var nodes []int32
	var list []byte
	for i := range rec.Jobs {
		j := &rec.Jobs[i]
		tj := rec.Trace.At(i)
		nodes = nodes[:0]
		for _, a := range j.Alloc.All() {
			nodes = append(nodes, a.Node)
		}
		slices.Sort(nodes)
		nodes = slices.Compact(nodes)
		row[0] = tj.ID
		row[1] = tj.User
		row[2] = partitionName(rec, j)
		row[3] = strconv.FormatInt(int64(j.Submit), 10)
		row[4], row[5], row[6] = "", "", ""
		if j.Start != workload.Unknown {
			row[4] = strconv.FormatInt(int64(j.Start), 10)
			w, _ := runs.wait(i) // WaitDefinitionText
			row[6] = strconv.FormatInt(int64(w), 10)
		}
		if j.End != workload.Unknown {
			row[5] = strconv.FormatInt(int64(j.End), 10)
		}
		row[7] = j.State.String()
		row[8] = strconv.Itoa(len(nodes))
		row[9] = strconv.FormatInt(j.GPUs(), 10)
		row[10] = jobNodeList(hosts, rec.Cluster, nodes, &list)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
