package bundle

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzBuild replaces the sacct, event, assoc and scontrol files of
// testdata/small with fuzzed text: Build must return a replay or an
// error, never panic, and a replay's jobs must line up with its trace.
func FuzzBuild(f *testing.F) {
	base := map[string][]byte{}
	root := filepath.Join("testdata", "small")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		base[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(base[FileSacct], base[FileEvent], base[FileAssoc], base[FileConfig])
	f.Add([]byte("JobID|Submit|Eligible|SubmitLine\n1|2026-01-01T00:00:00|2026-01-01T00:10:00|sbatch -H --dependency=afterok:1_[1-3] x\n"), []byte{}, []byte{}, []byte("BOOT_TIME = 1970-01-01T00:00:00\n"))
	f.Fuzz(func(t *testing.T, sacct, event, assoc, config []byte) {
		files := map[string][]byte{}
		for k, v := range base {
			files[k] = v
		}
		files[FileSacct], files[FileEvent], files[FileAssoc], files[FileConfig] = sacct, event, assoc, config
		b, err := FromFiles("fuzz", files)
		if err != nil {
			return
		}
		rp, err := b.Build()
		if err != nil {
			return
		}
		if len(rp.Jobs) != len(rp.Trace.Jobs) {
			t.Fatalf("%d recorded jobs, %d trace jobs", len(rp.Jobs), len(rp.Trace.Jobs))
		}
		for i := range rp.Jobs {
			if rp.Jobs[i].ID != rp.Trace.Jobs[i].ID {
				t.Fatalf("job %d: %s vs %s", i, rp.Jobs[i].ID, rp.Trace.Jobs[i].ID)
			}
		}
	})
}
