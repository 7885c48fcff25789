package reports

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"unicode"
	"unicode/utf8"

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
	bw := bufio.NewWriterSize(w, 64<<10)
	var line []byte
	for k, h := range jobsCSVHeader {
		line = appendCSVField(line, k, h)
	}
	line = append(line, '\n')
	runs := newRunTable(rec)
	hosts := clusterHosts(rec.Cluster)
	var nodes []int32
	var list []byte
	for i := range rec.Jobs {
		if _, err := bw.Write(line); err != nil {
			return err
		}
		j := &rec.Jobs[i]
		tj := rec.Trace.At(i)
		nodes = appendAllocNodes(nodes[:0], j.Alloc)
		line = appendCSVField(line[:0], 0, tj.ID)
		line = appendCSVField(line, 1, tj.User)
		line = appendCSVField(line, 2, partitionName(rec, j))
		line = strconv.AppendInt(append(line, ','), int64(j.Submit), 10)
		line = append(line, ',')
		if j.Start != workload.Unknown {
			line = strconv.AppendInt(line, int64(j.Start), 10)
		}
		line = append(line, ',')
		if j.End != workload.Unknown {
			line = strconv.AppendInt(line, int64(j.End), 10)
		}
		line = append(line, ',')
		if j.Start != workload.Unknown {
			w, _ := runs.wait(i) // WaitDefinitionText
			line = strconv.AppendInt(line, int64(w), 10)
		}
		line = appendCSVField(line, 7, j.State.String())
		line = strconv.AppendInt(append(line, ','), int64(len(nodes)), 10)
		line = strconv.AppendInt(append(line, ','), j.GPUs(), 10)
		if len(nodes) > 1 {
			list = hosts.Append(list[:0], nodes)
		} else {
			list = append(list[:0], jobNodeList(hosts, rec.Cluster, nodes, nil)...)
		}
		line = appendCSVBytes(line, 10, list)
		line = append(line, '\n')
	}
	if _, err := bw.Write(line); err != nil {
		return err
	}
	return bw.Flush()
}

// appendCSVField appends field k of a row (a comma before all but the
// first), quoted as encoding/csv's Writer quotes it: when it holds a
// quote, comma, CR or LF, is \. or begins with a space; quotes doubled.
func appendCSVField(line []byte, k int, field string) []byte {
	if k > 0 {
		line = append(line, ',')
	}
	if !csvNeedsQuotes(field) {
		return append(line, field...)
	}
	line = append(line, '"')
	for i := 0; i < len(field); i++ {
		if field[i] == '"' {
			line = append(line, '"')
		}
		line = append(line, field[i])
	}
	return append(line, '"')
}

func appendCSVBytes(line []byte, k int, field []byte) []byte {
	if k > 0 {
		line = append(line, ',')
	}
	if !hasCSVSpecial(string(field)) && !startsWithSpaceBytes(field) && string(field) != `\.` {
		return append(line, field...)
	}
	return appendCSVField(line[:len(line)-min(k, 1)], k, string(field))
}

// csvNeedsQuotes is encoding/csv's (*Writer).fieldNeedsQuotes for the
// comma delimiter.
func csvNeedsQuotes(field string) bool {
	if field == "" {
		return false
	}
	if field == `\.` || hasCSVSpecial(field) {
		return true
	}
	return startsWithSpace(field)
}

// csvSpecial marks the bytes that make a field need quotes: a quote,
// comma, CR or LF (ASCII, so never inside a multi-byte UTF-8 sequence).
var csvSpecial = [256]bool{'"': true, ',': true, '\r': true, '\n': true}

// hasCSVSpecial is strings.ContainsAny(field, "\",\r\n"), a byte at a
// time through csvSpecial (ContainsAny builds its set of bytes on every
// call: 28 M instructions for the HPC2N run's jobs.csv).
func hasCSVSpecial(field string) bool {
	for i := 0; i < len(field); i++ {
		if csvSpecial[field[i]] {
			return true
		}
	}
	return false
}

func startsWithSpaceBytes(field []byte) bool {
	r, _ := utf8.DecodeRune(field)
	return len(field) > 0 && unicode.IsSpace(r)
}

func startsWithSpace(field string) bool {
	r, _ := utf8.DecodeRuneInString(field)
	return unicode.IsSpace(r)
}
