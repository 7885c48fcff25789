package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/traces"
)

// Files of a Slurm-array directory.
const (
	ManifestFile = "manifest.json"
	ScriptFile   = "sweep.sbatch"
	RetryFile    = "retry.sbatch"
	ShardsDir    = "shards"
	LogsDir      = "logs"
)

// ManifestVersion is manifest.json's schema_version.
const ManifestVersion = 1

// Manifest describes a sweep split into the tasks of a Slurm job array.
// Task t runs points [t*PerTask, min((t+1)*PerTask, len(Points))).
type Manifest struct {
	SchemaVersion int    `json:"schema_version"`
	Sweep         string `json:"sweep"`      // absolute path of the sweep file
	SweepHash     string `json:"sweep_hash"` // its sha256 when the array was written
	Name          string `json:"name"`
	Binary        string `json:"binary"` // the schedsim the script runs
	PerTask       int    `json:"per_task"`
	Tasks         int    `json:"tasks"`
	MaxRunning    int    `json:"max_running"`
	Estimate      `json:"estimate"`
	Points        []ManifestPoint `json:"points"`
}

// ManifestPoint is one scenario of the array.
type ManifestPoint struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
	Dir   string `json:"dir"`
	Hash  string `json:"config_hash"`
}

// Estimate is the per-task resource request and where it came from.
type Estimate struct {
	PilotScenario string  `json:"pilot_scenario"`
	PilotWallS    float64 `json:"pilot_wall_s"`
	PilotPeakMB   int64   `json:"pilot_peak_rss_mb"`
	TimeS         int64   `json:"time_per_task_s"`
	MemMB         int64   `json:"mem_per_task_mb"`
}

// EstimateTask turns a pilot run of one scenario (wall seconds, peak
// resident bytes) into a per-task request for tasks of perTask scenarios:
//
//	time = max(5 min, 60 s + 3 × pilot_wall × perTask), rounded up to a minute
//	mem  = max(1 GiB, 1.5 × pilot_peak_rss + 256 MiB), rounded up to 256 MiB
//
// The factor 3 covers scenarios heavier than the pilot (larger clusters or
// loads) and slower compute nodes; 60 s covers start-up and the writing of
// outputs. Scenarios of a task run one after another in one process, so
// memory is one scenario's peak, with room for the garbage collector.
func EstimateTask(pilotWallS float64, pilotPeakBytes int64, perTask int) (timeS, memMB int64) {
	t := 60 + 3*pilotWallS*float64(perTask)
	// Slurm holds a time limit in minutes in a uint32 whose two largest
	// values mean INFINITE and NO_VAL; beyond that (or NaN) the request
	// is the largest finite limit, and the float never overflows an int64.
	if !(t <= maxSlurmTimeS) {
		t = maxSlurmTimeS
	}
	timeS = max(300, int64(t+59)/60*60)
	mb := (1.5*float64(pilotPeakBytes))/(1<<20) + 256
	memMB = max(1024, (int64(mb)+255)/256*256)
	return timeS, memMB
}

// maxSlurmTimeS is the largest finite time limit Slurm holds, in seconds:
// 0xfffffffd minutes (0xfffffffe is NO_VAL, 0xffffffff INFINITE).
const maxSlurmTimeS = 0xfffffffd * 60

// MaxArrayTasks is the most tasks one job array may have: Slurm refuses
// a MaxArraySize above 4000001 (read_config.c,
// _validate_and_set_defaults), and task indices run from 0 to
// MaxArraySize − 1. The default MaxArraySize is 1001.
const MaxArrayTasks = 4000001

// TaskCount returns how many tasks of perTask points hold points points,
// ⌈points / perTask⌉, without the overflow of (points + perTask − 1) /
// perTask: a perTask near the largest int gave 0 tasks. It is 0 for
// points <= 0 and an error for perTask < 1.
func TaskCount(points, perTask int) (int, error) {
	if perTask < 1 {
		return 0, fmt.Errorf("per-task must be >= 1, got %d", perTask)
	}
	if points <= 0 {
		return 0, nil
	}
	return (points-1)/perTask + 1, nil
}

// NewManifest splits sw into tasks of perTask points. A perTask above the
// number of points is one task of them all (per_task is then the number
// of points); more than MaxArrayTasks tasks, or a sweep without points, is
// an error. maxRunning < 1 means min(tasks, 64); more than the tasks is
// cut to the tasks.
func NewManifest(sw *Sweep, binary string, perTask, maxRunning int, est Estimate) (*Manifest, error) {
	n := len(sw.Points)
	if n == 0 {
		return nil, errors.New("the sweep has no scenarios: nothing to split into tasks")
	}
	if perTask < 1 {
		return nil, fmt.Errorf("per-task must be >= 1, got %d", perTask)
	}
	perTask = min(perTask, n)
	tasks, err := TaskCount(n, perTask)
	if err != nil {
		return nil, err
	}
	if tasks > MaxArrayTasks {
		return nil, fmt.Errorf("per-task %d: %d scenarios make %d tasks, more than a Slurm job array can have (%d, the largest MaxArraySize); raise per-task to at least %d",
			perTask, n, tasks, MaxArrayTasks, (n-1)/MaxArrayTasks+1)
	}
	abs, err := filepath.Abs(sw.Path)
	if err != nil {
		return nil, err
	}
	m := &Manifest{SchemaVersion: ManifestVersion, Sweep: abs, SweepHash: sw.Hash, Name: sw.Name, Binary: binary,
		PerTask: perTask, Tasks: tasks, MaxRunning: min(maxRunning, tasks), Estimate: est}
	if m.MaxRunning < 1 {
		m.MaxRunning = min(m.Tasks, 64)
	}
	for _, p := range sw.Points {
		m.Points = append(m.Points, ManifestPoint{Index: p.Index, Name: p.Name, Dir: p.Dir, Hash: p.Hash})
	}
	return m, nil
}

// TaskRange returns the points task t runs.
func (m *Manifest) TaskRange(t int) (lo, hi int) {
	// t < Tasks = ⌈points / per_task⌉, so t × per_task < points: no overflow.
	lo = t * m.PerTask
	return lo, lo + min(m.PerTask, len(m.Points)-lo)
}

// ReadManifest reads dir/manifest.json.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m.SchemaVersion != ManifestVersion {
		return nil, fmt.Errorf("%s: schema_version %d, want %d", path, m.SchemaVersion, ManifestVersion)
	}
	tasks, err := TaskCount(len(m.Points), m.PerTask)
	if err != nil || len(m.Points) == 0 || m.Tasks != tasks || m.Tasks > MaxArrayTasks {
		return nil, fmt.Errorf("%s: tasks %d, per_task %d and %d points do not add up (want tasks = ⌈points / per_task⌉, at least 1 and at most %d): write the array again",
			path, m.Tasks, m.PerTask, len(m.Points), MaxArrayTasks)
	}
	for i, p := range m.Points {
		if p.Index != i {
			return nil, fmt.Errorf("%s: points[%d] has index %d, want %d: write the array again", path, i, p.Index, i)
		}
	}
	if m.MaxRunning < 1 {
		return nil, fmt.Errorf("%s: max_running %d, want >= 1: write the array again", path, m.MaxRunning)
	}
	return &m, nil
}

// LoadSweep loads the manifest's sweep file and checks that it is the one
// the array was written for (same bytes, same points).
func (m *Manifest) LoadSweep() (*Sweep, error) {
	sw, err := Load(m.Sweep)
	if err != nil {
		return nil, err
	}
	if sw.Hash != m.SweepHash {
		return nil, fmt.Errorf("%s changed since the array was written (%s, now %s): write the array again", m.Sweep, m.SweepHash, sw.Hash)
	}
	if len(sw.Points) != len(m.Points) {
		return nil, fmt.Errorf("%s: %d scenarios, the manifest has %d", m.Sweep, len(sw.Points), len(m.Points))
	}
	for i, p := range sw.Points {
		if q := m.Points[i]; p.Name != q.Name || p.Dir != q.Dir || p.Hash != q.Hash {
			return nil, fmt.Errorf("%s: scenario %d is %q (%s), the manifest has %q (%s): write the array again", m.Sweep, i, p.Name, p.Hash, q.Name, q.Hash)
		}
	}
	return sw, nil
}

// WriteArray writes manifest.json and sweep.sbatch into dir and creates
// dir/logs and dir/shards.
func WriteArray(dir string, m *Manifest) error {
	for _, d := range []string{dir, filepath.Join(dir, LogsDir), filepath.Join(dir, ShardsDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := traces.WriteFileAtomic(filepath.Join(dir, ManifestFile), func(w io.Writer) error {
		_, err := w.Write(append(data, '\n'))
		return err
	}); err != nil {
		return err
	}
	all := make([]int, m.Tasks)
	for i := range all {
		all[i] = i
	}
	return writeScript(filepath.Join(dir, ScriptFile), dir, m, all)
}

func writeScript(path, dir string, m *Manifest, tasks []int) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	var b strings.Builder
	if err := Script(&b, m, abs, tasks); err != nil {
		return err
	}
	if err := traces.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := io.WriteString(w, b.String())
		return err
	}); err != nil {
		return err
	}
	return os.Chmod(path, 0o755)
}

// ShellQuote quotes s for a POSIX shell: inside single quotes nothing is
// special, and a single quote is written as '\”. It fails on a NUL byte,
// which no shell word can hold.
func ShellQuote(s string) (string, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return "", fmt.Errorf("%q: a NUL byte cannot be passed to a shell", s)
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'", nil
}

// ArraySpec writes task numbers as Slurm's --array value: ranges where
// consecutive ("0-9", "3,7-8"), then "%K".
func ArraySpec(tasks []int, maxRunning int) string {
	var parts []string
	for i := 0; i < len(tasks); {
		j := i
		for j+1 < len(tasks) && tasks[j+1] == tasks[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", tasks[i], tasks[j]))
		} else {
			parts = append(parts, strconv.Itoa(tasks[i]))
		}
		i = j + 1
	}
	return fmt.Sprintf("%s%%%d", strings.Join(parts, ","), max(1, min(maxRunning, len(tasks))))
}

// slurmTime formats seconds as Slurm's D-HH:MM:SS.
func slurmTime(s int64) string {
	d, s := s/86400, s%86400
	return fmt.Sprintf("%d-%02d:%02d:%02d", d, s/3600, s/60%60, s%60)
}

// Script writes the sbatch script of m's tasks (absDir is the array
// directory). Only numbers and names reduced to [A-Za-z0-9._=+-] go on
// #SBATCH lines; every other value (paths, the sweep's name) is a
// single-quoted shell word, so no value can run a command.
func Script(w io.Writer, m *Manifest, absDir string, tasks []int) error {
	if len(tasks) == 0 {
		return errors.New("a job array of no tasks")
	}
	bin, err := ShellQuote(m.Binary)
	if err != nil {
		return fmt.Errorf("binary: %w", err)
	}
	dir, err := ShellQuote(absDir)
	if err != nil {
		return fmt.Errorf("directory: %w", err)
	}
	name, err := ShellQuote(m.Name)
	if err != nil {
		return fmt.Errorf("sweep name: %w", err)
	}
	job := m.Name
	if job == "" {
		job = strings.TrimSuffix(filepath.Base(m.Sweep), filepath.Ext(m.Sweep))
	}
	job = "schedsim-" + safeName(job)
	if len(job) > 64 {
		job = job[:64]
	}
	_, err = fmt.Fprintf(w, `#!/bin/bash
# A schedsim sweep as a Slurm job array: each task runs one shard of
# %d scenarios (%d per task), then "schedsim sweep merge" joins them.
# Submit from this directory (logs go to logs/):  sbatch %s
# Per-task time and memory come from a pilot run (manifest.json,
# "estimate"); sbatch options on the command line override these.
#SBATCH --job-name=%s
#SBATCH --array=%s
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --time=%s
#SBATCH --mem=%dM
#SBATCH --output=logs/%%A_%%a.out
set -eu
SCHEDSIM=%s
SWEEP_DIR=%s
SWEEP_NAME=%s
echo "schedsim sweep ${SWEEP_NAME}: task ${SLURM_ARRAY_TASK_ID} of %d" >&2
exec "$SCHEDSIM" sweep run-shard "$SWEEP_DIR"
`, len(m.Points), m.PerTask, ScriptFile, job, ArraySpec(tasks, m.MaxRunning), slurmTime(m.TimeS), m.MemMB, bin, dir, name, m.Tasks)
	return err
}

// ShardFile is task t's result table under dir/shards.
func ShardFile(t int) string { return fmt.Sprintf("task-%05d.parquet", t) }

// FailedFile is task t's failure note under dir/shards.
func FailedFile(t int) string { return fmt.Sprintf("task-%05d.failed", t) }

// RunShard runs task t of the array in dir: its points, one after another
// (resuming those whose outputs match), with outputs under dir/runs. On
// success it writes dir/shards/task-T.parquet; when a scenario fails it
// writes dir/shards/task-T.failed with the errors and returns an error.
func RunShard(dir string, t int, reg policies.Registry, progress func(done, total int, r *Result)) error {
	m, err := ReadManifest(dir)
	if err != nil {
		return err
	}
	if !(t >= 0 && t < m.Tasks) {
		return fmt.Errorf("task %d: the array has tasks 0 to %d", t, m.Tasks-1)
	}
	sw, err := m.LoadSweep()
	if err != nil {
		return err
	}
	lo, hi := m.TaskRange(t)
	results := Run(sw, sw.PointsOf(lo, hi), dir, Options{Workers: 1, Registry: reg, Progress: progress})
	shards := filepath.Join(dir, ShardsDir)
	if err := os.MkdirAll(shards, 0o755); err != nil {
		return err
	}
	var rows []Row
	var errs []string
	for i := range results {
		if results[i].Err != nil {
			errs = append(errs, results[i].Err.Error())
			continue
		}
		rows = append(rows, RowOf(&results[i]))
	}
	if len(errs) > 0 {
		se := &ShardError{Task: t, Scenarios: hi - lo}
		for i := range results {
			if results[i].Err != nil {
				se.Failed = append(se.Failed, results[i].Err)
			}
		}
		msg := fmt.Sprintf("task %d: %d of %d scenarios failed:\n%s\n", t, len(errs), hi-lo, strings.Join(errs, "\n"))
		if err := traces.WriteFileAtomic(filepath.Join(shards, FailedFile(t)), func(w io.Writer) error {
			_, err := io.WriteString(w, msg)
			return err
		}); err != nil {
			return err
		}
		return se
	}
	if err := traces.WriteFileAtomic(filepath.Join(shards, ShardFile(t)), func(w io.Writer) error {
		return WriteParquet(w, rows, sw.Meta())
	}); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(shards, FailedFile(t))); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// ShardError is RunShard's error when scenarios of the task failed: one
// line; Failed holds each scenario's error (errors.Is sees them).
type ShardError struct {
	Task, Scenarios int
	Failed          []error
}

func (e *ShardError) Error() string {
	return fmt.Sprintf("task %d: %d of %d scenarios failed (listed in %s)", e.Task, len(e.Failed), e.Scenarios, filepath.Join(ShardsDir, FailedFile(e.Task)))
}

func (e *ShardError) Unwrap() []error { return e.Failed }

// MergeReport says which tasks' shards are missing or failed.
type MergeReport struct {
	Tasks   int
	Missing []int          // no shard and no failure note: not run yet, or killed (time, memory, node)
	Failed  map[int]string // the failure note
	Rows    int
}

// Incomplete lists the missing and failed tasks, in order.
func (r *MergeReport) Incomplete() []int {
	out := slices.Clone(r.Missing)
	for t := range r.Failed {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// Merge joins the shards of the array in dir into dir/sweep.parquet and
// dir/plots when every task has its shard. Otherwise it writes
// dir/retry.sbatch, an array of only the missing and failed tasks, and
// returns the report with an error.
func Merge(dir string) (*MergeReport, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	sw, err := m.LoadSweep()
	if err != nil {
		return nil, err
	}
	rep := &MergeReport{Tasks: m.Tasks, Failed: map[int]string{}}
	if err := checkShardNames(dir, m.Tasks); err != nil {
		return nil, err
	}
	var rows []Row
	for t := range m.Tasks {
		path := filepath.Join(dir, ShardsDir, ShardFile(t))
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			if note, err := os.ReadFile(filepath.Join(dir, ShardsDir, FailedFile(t))); err == nil {
				rep.Failed[t] = strings.TrimSpace(string(note))
			} else {
				rep.Missing = append(rep.Missing, t)
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		got, _, err := ReadParquet(path, data)
		if err != nil {
			return nil, err
		}
		lo, hi := m.TaskRange(t)
		if len(got) != hi-lo {
			return nil, fmt.Errorf("%s: %d rows, want %d (scenarios %d to %d)", path, len(got), hi-lo, lo, hi-1)
		}
		for i, r := range got {
			if p := m.Points[lo+i]; r.Index != int64(p.Index) || r.ConfigHash != p.Hash {
				return nil, fmt.Errorf("%s: row %d is scenario %d (%s), want %d (%s)", path, i, r.Index, r.ConfigHash, p.Index, p.Hash)
			}
		}
		rows = append(rows, got...)
	}
	rep.Rows = len(rows)
	if bad := rep.Incomplete(); len(bad) > 0 {
		if err := writeScript(filepath.Join(dir, RetryFile), dir, m, bad); err != nil {
			return rep, err
		}
		return rep, fmt.Errorf("%d of %d tasks have no results (missing %v, failed %v): submit %s to run only those",
			len(bad), m.Tasks, rep.Missing, slices.Sorted(maps.Keys(rep.Failed)), RetryFile)
	}
	if len(rows) != len(m.Points) {
		return rep, fmt.Errorf("%s: the shards hold %d rows, the manifest %d scenarios: write the array again", dir, len(rows), len(m.Points))
	}
	if err := os.Remove(filepath.Join(dir, RetryFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return rep, err
	}
	return rep, WriteResults(dir, sw, rows)
}

// checkShardNames refuses shards (or failure notes) of tasks the manifest
// does not have: the array was written again with another split, and the
// shards belong to the old one.
func checkShardNames(dir string, tasks int) error {
	ents, err := os.ReadDir(filepath.Join(dir, ShardsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		num, ok := strings.CutPrefix(name, "task-")
		if !ok {
			continue
		}
		num, ok = strings.CutSuffix(num, ".parquet")
		if !ok {
			if num, ok = strings.CutSuffix(strings.TrimPrefix(name, "task-"), ".failed"); !ok {
				continue
			}
		}
		t, err := strconv.Atoi(num)
		if err != nil || t < 0 || t >= tasks {
			return fmt.Errorf("%s: %s is not one of the manifest's %d tasks (task-00000 to task-%05d): the array was written again with another split; remove %s/ and run the tasks again",
				dir, filepath.Join(ShardsDir, name), tasks, tasks-1, ShardsDir)
		}
	}
	return nil
}
