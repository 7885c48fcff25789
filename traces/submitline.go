package traces

import (
	"errors"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/schedsim/schedsim/workload"
)

// sacct's SubmitLine (Slurm >= 21.08) is the command that submitted the
// job: slurm_option_get_argv_str (src/common/slurm_opt.c) joins sbatch's,
// srun's or salloc's argv with single spaces, without quoting. It is split
// here as a POSIX shell splits words (quotes and backslashes honoured
// where they appear), which gives the argv back unless an argument held
// whitespace; options are read as getopt_long reads them, up to the first
// word that is not an option (the batch script or the program: what
// follows is its arguments, since Slurm's option strings start with "+").

// submitLine is what a SubmitLine says about a job.
type submitLine struct {
	requeue    int8 // 1 --requeue, -1 --no-requeue, 0 neither
	throttle   int32
	deps       []workload.Dependency
	hasDeps    bool
	timeLimit  workload.Time // Unknown when not given or unlimited
	hasTime    bool
	checkpoint workload.Time // 0 when not given
	begin      string        // --begin as given
	hold       bool          // -H/--hold
	switches   uint8         // --switches=N (0: not given, or @0)
	switchWait uint16        // --switches' @T in seconds, 0 when not given
}

// errSubmitLine marks a SubmitLine that could not be read.
var errSubmitLine = errors.New("bad SubmitLine")

// shellWords splits s into words as a POSIX shell does: blanks separate
// words; '...' is literal; "..." keeps everything but \ before $ ` " \ or
// a newline; a backslash outside quotes escapes the next character. An
// unquoted ';', '&', '|', '<' or '>' ends the command (what follows is
// not sbatch's). Unbalanced quotes are an error.
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			flush()
		case c == ';' || c == '&' || c == '|' || c == '<' || c == '>':
			flush()
			return words, nil
		case c == '\\':
			inWord = true
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					w.WriteByte(s[i])
				}
			}
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("%w: unclosed single quote", errSubmitLine)
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			closed := false
			for i++; i < len(s); i++ {
				if s[i] == '"' {
					closed = true
					break
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
					if s[i] == '\n' {
						continue
					}
				}
				w.WriteByte(s[i])
			}
			if !closed {
				return nil, fmt.Errorf("%w: unclosed double quote", errSubmitLine)
			}
		default:
			inWord = true
			w.WriteByte(c)
		}
	}
	flush()
	return words, nil
}

// Argument kinds of Slurm's command-line options.
const (
	argNone = iota
	argRequired
	argOptional // only as --name=value or -xVALUE
)

// slurmLongArgs are the long options of sbatch, srun and salloc (Slurm
// 22.05, src/common/slurm_opt.c, the has_arg of each slurm_cli_opt_t) that
// take an argument; the others take none. srun's --wait takes seconds,
// sbatch's none: see longArg.
var slurmLongArgs = map[string]int{
	"account": argRequired, "acctg-freq": argRequired, "array": argRequired, "batch": argRequired,
	"bb": argRequired, "bbf": argRequired, "bcast": argOptional, "bcast-exclude": argRequired,
	"begin": argRequired, "chdir": argRequired, "checkpoint": argRequired, "checkpoint-dir": argRequired,
	"cluster": argRequired, "clusters": argRequired, "cluster-constraint": argRequired,
	"comment": argRequired, "compress": argOptional, "constraint": argRequired, "container": argRequired,
	"container-id": argRequired, "core-spec": argRequired, "cores-per-socket": argRequired,
	"cpu-bind": argRequired, "cpu-freq": argRequired, "cpus-per-gpu": argRequired,
	"cpus-per-task": argRequired, "deadline": argRequired, "delay-boot": argRequired,
	"dependency": argRequired, "distribution": argRequired, "epilog": argRequired, "error": argRequired,
	"exclude": argRequired, "exclusive": argOptional, "export": argRequired, "export-file": argRequired,
	"extra": argRequired, "extra-node-info": argRequired, "get-user-env": argOptional, "gid": argRequired,
	"gpu-bind": argRequired, "gpu-freq": argRequired, "gpus": argRequired, "gpus-per-node": argRequired,
	"gpus-per-socket": argRequired, "gpus-per-task": argRequired, "gres": argRequired,
	"gres-flags": argRequired, "hint": argRequired, "input": argRequired, "jobid": argRequired,
	"job-name": argRequired, "kill-on-bad-exit": argOptional, "kill-on-invalid-dep": argRequired,
	"licenses": argRequired, "mail-type": argRequired, "mail-user": argRequired,
	"mcs-label": argRequired, "mem": argRequired, "mem-bind": argRequired, "mem-per-cpu": argRequired,
	"mem-per-gpu": argRequired, "mincpus": argRequired, "mpi": argRequired, "network": argRequired,
	"nice": argOptional, "no-kill": argOptional, "nodefile": argRequired, "nodelist": argRequired,
	"nodes": argRequired, "ntasks": argRequired, "ntasks-per-core": argRequired,
	"ntasks-per-gpu": argRequired, "ntasks-per-node": argRequired, "ntasks-per-socket": argRequired,
	"open-mode": argRequired, "output": argRequired, "partition": argRequired, "power": argRequired,
	"prefer": argRequired, "priority": argRequired, "profile": argRequired, "prolog": argRequired,
	"propagate": argOptional, "qos": argRequired, "relative": argRequired, "reservation": argRequired,
	"resv-ports": argOptional, "signal": argRequired, "slurmd-debug": argRequired,
	"sockets-per-node": argRequired, "switches": argRequired, "task-epilog": argRequired,
	"task-prolog": argRequired, "thread-spec": argRequired, "threads": argRequired,
	"threads-per-core": argRequired, "time": argRequired, "time-min": argRequired, "tmp": argRequired,
	"tres-bind": argRequired, "tres-per-task": argRequired, "uid": argRequired, "umask": argRequired,
	"wait-all-nodes": argRequired, "wckey": argRequired, "wrap": argRequired, "x11": argOptional,
}

// Short options that take an argument (required, or optional for the
// letters in slurmShortOptional), by command: sbatch's and salloc's
// option strings and srun's (src/common/slurm_opt.c, 22.05).
var (
	slurmShortArgs = map[string]string{
		"sbatch": "AaBbCcDdeFGiJLMmNnopqStwx",
		"salloc": "ABbCcDdFGJLMmNnpqStwx",
		"srun":   "ABbCcDdeGiJLMmNnopqrSTtWwx",
	}
	slurmShortOptional = map[string]string{
		"sbatch": "k",
		"salloc": "Ik",
		"srun":   "IKk",
	}
)

// longArg is how the long option name takes an argument under cmd.
func longArg(cmd, name string) int {
	if name == "wait" {
		if cmd == "srun" {
			return argRequired
		}
		return argNone
	}
	return slurmLongArgs[name]
}

// parseSubmitLine reads the options of a SubmitLine that bear on the
// simulation: --requeue and --no-requeue, -a/--array's %N throttle,
// -d/--dependency, -b/--begin, -t/--time, and --checkpoint (the
// checkpoint interval of sbatch up to Slurm 19.05, in --time's formats;
// the one convention for a checkpoint interval on the command line). The
// command must be sbatch, srun or salloc (by the base name of the first
// word). A value that cannot be read is an error; the caller counts it.
func parseSubmitLine(s string) (submitLine, error) {
	out := submitLine{timeLimit: workload.Unknown}
	words, err := shellWords(s)
	if err != nil {
		return out, err
	}
	if len(words) == 0 {
		return out, fmt.Errorf("%w: empty", errSubmitLine)
	}
	cmd := path.Base(words[0])
	if _, ok := slurmShortArgs[cmd]; !ok {
		return out, fmt.Errorf("%w: %q is not sbatch, srun or salloc", errSubmitLine, cmd)
	}
	set := func(name, val string) error {
		var err error
		switch name {
		case "requeue":
			out.requeue = 1
		case "no-requeue":
			out.requeue = -1
		case "array":
			if i := strings.LastIndexByte(val, '%'); i >= 0 {
				n, perr := strconv.ParseInt(val[i+1:], 10, 32)
				if perr != nil || n < 0 {
					return fmt.Errorf("%w: --array=%s: want a throttle %%N", errSubmitLine, val)
				}
				out.throttle = int32(n)
			}
		case "dependency":
			if out.deps, err = parseDeps([]byte(val)); err != nil {
				return fmt.Errorf("%w: --dependency=%s: %v", errSubmitLine, val, err)
			}
			out.hasDeps = true
		case "time":
			if out.timeLimit, err = parseSlurmTime(val); err != nil {
				return fmt.Errorf("%w: --time=%s: %v", errSubmitLine, val, err)
			}
			out.hasTime = true
		case "checkpoint":
			t, err := parseSlurmTime(val)
			if err != nil || t == workload.Unknown || t > workload.MaxCheckpointInterval {
				return fmt.Errorf("%w: --checkpoint=%s: want an interval in --time's formats, at most %d s", errSubmitLine, val, workload.MaxCheckpointInterval)
			}
			out.checkpoint = t
		case "switches":
			if out.switches, out.switchWait, err = parseSwitches(val); err != nil {
				return fmt.Errorf("%w: --switches=%s: %v", errSubmitLine, val, err)
			}
		case "begin":
			out.begin = val
		case "hold":
			out.hold = true
		}
		return nil
	}
	shortName := map[byte]string{'a': "array", 'd': "dependency", 't': "time", 'b': "begin"}
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "--":
			return out, nil
		case strings.HasPrefix(w, "--"):
			name, val, hasVal := strings.Cut(w[2:], "=")
			kind := longArg(cmd, name)
			if kind == argRequired && !hasVal {
				if i+1 >= len(words) {
					return out, fmt.Errorf("%w: --%s needs a value", errSubmitLine, name)
				}
				i++
				val = words[i]
			}
			if err := set(name, val); err != nil {
				return out, err
			}
		case len(w) > 1 && w[0] == '-':
			// Bundled short options: -Hv, -t60, -t 60.
			for k := 1; k < len(w); k++ {
				c := w[k]
				if strings.IndexByte(slurmShortOptional[cmd], c) >= 0 {
					break // the rest of the word is its optional value
				}
				if strings.IndexByte(slurmShortArgs[cmd], c) < 0 {
					out.hold = out.hold || c == 'H'
					continue // a flag
				}
				val := w[k+1:]
				if val == "" {
					if i+1 >= len(words) {
						return out, fmt.Errorf("%w: -%c needs a value", errSubmitLine, c)
					}
					i++
					val = words[i]
				}
				if name, ok := shortName[c]; ok {
					if err := set(name, val); err != nil {
						return out, err
					}
				}
				break
			}
		default:
			return out, nil // the script or program: its arguments follow
		}
	}
	return out, nil
}

// parseSwitches reads --switches=N[@T] as slurm_opt.c arg_set_switches
// does: N a positive count (parse_int), T in time_str2secs' formats
// (minutes, MM:SS, HH:MM:SS, D-HH...; "5" is 300 s). INFINITE, UNLIMITED
// or -1 for T is no T (the wait is then max_switch_wait); T of 0 waits
// not at all, so the request is none (0, 0); N above 255 is taken as 255
// and T above 65,535 s as 65,535 s (the request's fields; Slurm caps T by
// max_switch_wait, 300 s by default).
func parseSwitches(val string) (n uint8, wait uint16, err error) {
	num, t, hasT := strings.Cut(val, "@")
	v, perr := strconv.ParseInt(num, 10, 64)
	if perr != nil || v <= 0 {
		return 0, 0, errors.New("want a positive switch count N, as N or N@T")
	}
	n = uint8(min(v, math.MaxUint8))
	if !hasT {
		return n, 0, nil
	}
	switch strings.ToUpper(t) {
	case "-1", "INFINITE", "UNLIMITED":
		return n, 0, nil
	}
	secs, perr := parseSlurmTime(t)
	if perr != nil {
		return 0, 0, fmt.Errorf("@%s: %v", t, perr)
	}
	if secs == workload.Unknown { // 0: no wait
		return 0, 0, nil
	}
	return n, uint16(min(secs, math.MaxUint16)), nil
}

// parseSlurmTime reads a time limit as sbatch --time takes it
// (time_str2secs, src/common/parse_time.c): minutes, minutes:seconds,
// hours:minutes:seconds, days-hours, days-hours:minutes,
// days-hours:minutes:seconds; "-1", "INFINITE", "UNLIMITED" and 0 mean no
// limit (Unknown).
func parseSlurmTime(s string) (workload.Time, error) {
	switch strings.ToUpper(s) {
	case "-1", "INFINITE", "UNLIMITED":
		return workload.Unknown, nil
	}
	bad := errors.New("want minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS")
	num := func(x string) (int64, bool) {
		if x == "" || len(x) > 9 {
			return 0, false
		}
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil && n >= 0
	}
	var days int64
	rest := s
	if d, r, ok := strings.Cut(s, "-"); ok {
		n, ok := num(d)
		if !ok {
			return 0, bad
		}
		days, rest = n, r
	}
	parts := strings.Split(rest, ":")
	if len(parts) > 3 {
		return 0, bad
	}
	v := make([]int64, len(parts))
	for i, p := range parts {
		n, ok := num(p)
		if !ok {
			return 0, bad
		}
		v[i] = n
	}
	var secs int64
	switch {
	case s != rest: // days-hours[:minutes[:seconds]]
		secs = days*86400 + v[0]*3600
		if len(v) > 1 {
			secs += v[1] * 60
		}
		if len(v) > 2 {
			secs += v[2]
		}
	case len(v) == 3:
		secs = v[0]*3600 + v[1]*60 + v[2]
	case len(v) == 2:
		secs = v[0]*60 + v[1]
	default:
		secs = v[0] * 60
	}
	if secs == 0 {
		return workload.Unknown, nil // sbatch: a limit of 0 is infinite
	}
	if secs > maxSeconds || secs > math.MaxInt64/2 {
		return 0, bad
	}
	return workload.Time(secs), nil
}

// resolveBegin turns a --begin value into a time (the job's clock, Unix
// seconds of sacct's wall-clock readings) where it is absolute
// (YYYY-MM-DD[THH:MM[:SS]]) or relative to the submit (now+N[units]);
// ok is false for the forms that depend on the submitting host's day
// (HH:MM, MM/DD, today, midnight, teatime, ...).
func resolveBegin(s string, submit workload.Time) (workload.Time, bool) {
	if rel, ok := strings.CutPrefix(strings.ToLower(s), "now"); ok {
		if rel == "" {
			return submit, true
		}
		sign := int64(1)
		switch rel[0] {
		case '+':
		case '-':
			sign = -1
		default:
			return 0, false
		}
		rel = rel[1:]
		i := 0
		for i < len(rel) && rel[i] >= '0' && rel[i] <= '9' {
			i++
		}
		n, err := strconv.ParseInt(rel[:i], 10, 64)
		if err != nil || n > maxSeconds {
			return 0, false
		}
		unit := int64(1)
		switch rel[i:] {
		case "", "s", "sec", "secs", "second", "seconds":
		case "m", "min", "mins", "minute", "minutes":
			unit = 60
		case "h", "hour", "hours":
			unit = 3600
		case "d", "day", "days":
			unit = 86400
		case "w", "week", "weeks":
			unit = 7 * 86400
		default:
			return 0, false
		}
		if n > maxSeconds/unit {
			return 0, false
		}
		return submit + workload.Time(sign*n*unit), true
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return workload.Time(t.Unix()), true
		}
	}
	return 0, false
}
