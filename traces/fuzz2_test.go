package traces

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// addSharedSeeds adds the first lines of a ../shared/traces file, when the
// directory is there, as a fuzz seed.
func addSharedSeeds(f *testing.F, name string, lines int) {
	p := filepath.Join("..", "..", "shared", "traces", name)
	fh, err := os.Open(p)
	if err != nil {
		return
	}
	defer fh.Close()
	var r io.Reader = fh
	if strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(fh)
		if err != nil {
			return
		}
		r = zr
	}
	sc := bufio.NewScanner(r)
	var b bytes.Buffer
	for i := 0; i < lines && sc.Scan(); i++ {
		b.Write(sc.Bytes())
		b.WriteByte('\n')
	}
	f.Add(b.Bytes())
}

func readSome(t *testing.T, next func() (jobID string, err error)) {
	for n := 0; n < maxFuzzJobs; n++ {
		_, err := next()
		if err == io.EOF {
			return
		}
		if err != nil {
			checkParseError(t, err)
			return
		}
	}
}

// FuzzCSVRead: the column-mapped CSV reader never panics and its errors
// are *ParseError with a line number, through the eagle and helios presets
// and a custom map with every kind of unit, strict and lenient.
func FuzzCSVRead(f *testing.F) {
	addFileSeeds(f, "testdata/*.csv")
	addSharedSeeds(f, "slurm-csv_nrel-eagle_first1000.csv", 60)
	f.Add([]byte("a,b\n\"x,\"\"y\",2\n\"open\n"))
	eagle, _ := CSVPreset(PresetEagle)
	helios, _ := CSVPreset(PresetHelios)
	maps := []CSVMap{eagle, helios, sentinelMap, {Name: "x", Fields: map[string]CSVColumn{
		"submit": {Column: "a", Unit: "02/01/2006 15:04"}, "runtime": {Column: "b", Unit: "slurm"},
		"mem": {Column: "b", Unit: "slurm"}, "cpus": {Column: "a", Unit: "milli"}, "start": {Column: "b", Unit: "unixms"},
	}}}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, m := range maps {
			for _, lenient := range []bool{false, true} {
				cr, err := NewCSVReader(bytes.NewReader(data), "f.csv", m, lenient)
				if err != nil {
					if _, ok := err.(*ParseError); ok {
						checkParseError(t, err)
					}
					continue
				}
				readSome(t, func() (string, error) {
					j, err := cr.Next()
					if err == nil {
						checkJob(t, j)
					}
					return j.ID, err
				})
			}
		}
	})
}

// FuzzAlibabaRead: the Alibaba pod reader never panics; errors are
// *ParseError with a line number.
func FuzzAlibabaRead(f *testing.F) {
	addFileSeeds(f, "testdata/alibaba*.csv")
	addSharedSeeds(f, "alibaba-gpu2023_openb_pod_list_default.csv", 60)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, o := range []AlibabaOptions{{}, {Lenient: true, TraceEnd: 12902960}} {
			ar, err := NewAlibabaReader(bytes.NewReader(data), "p.csv", o)
			if err != nil {
				checkParseError(t, err)
				continue
			}
			readSome(t, func() (string, error) {
				j, err := ar.Next()
				if err == nil {
					checkJob(t, j)
				}
				return j.ID, err
			})
		}
		_, err := ReadAlibabaNodes(bytes.NewReader(data), "n.csv")
		if err != nil {
			checkParseError(t, err)
		}
	})
}

// FuzzPhillyRead: the Philly JSON reader never panics; errors are
// *ParseError with a line number.
func FuzzPhillyRead(f *testing.F) {
	addFileSeeds(f, "testdata/*.json")
	f.Add([]byte(`[{"jobid":"a","submitted_time":"2017-10-07 01:11:39","attempts":[{"start_time":"x"}]}]`))
	f.Add([]byte("[\n{\"jobid\": 5}\n]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, lenient := range []bool{false, true} {
			pr, _ := NewPhillyReader(bytes.NewReader(data), "p.json", lenient)
			readSome(t, func() (string, error) {
				j, err := pr.Next()
				if err == nil {
					checkJob(t, j)
				}
				return j.ID, err
			})
		}
	})
}
