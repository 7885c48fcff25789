package main

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/schedsim/schedsim/traces"
)

// The --max-* flags bound what reading a trace may cost (traces.Limits):
// every size a file states is checked against them, or against a bound
// from the file's own size, before anything is allocated. A limit error
// names its flag, so the message says how to raise it.

// limitFlags holds the values of the --max-* flags of one command.
type limitFlags struct {
	l traces.Limits
	// global: setting a flag also sets the process default
	// (traces.SetDefaultLimits), for commands that read traces through
	// code that builds its own traces.Options (run's scenario).
	global bool
}

// addLimitFlags registers the --max-* flags on cmd; their values become
// the process's default trace limits, so every trace the command reads
// (a scenario's included) is bounded by them. It returns the flags.
func addLimitFlags(cmd *cobra.Command) *limitFlags {
	lf := &limitFlags{global: true}
	lf.register(cmd.Flags())
	lf.set() // a command tree built afresh starts from the built-in defaults
	return lf
}

// limitsMu serialises the updates of the process default.
var limitsMu sync.Mutex

func (lf *limitFlags) set() {
	if !lf.global {
		return
	}
	limitsMu.Lock()
	traces.SetDefaultLimits(lf.l)
	limitsMu.Unlock()
}

// register adds the flags to fl.
func (lf *limitFlags) register(fl *pflag.FlagSet) {
	count := func(name string, dst *int64, def int64, usage string) {
		fl.Var(&limitValue{lf: lf, dst: dst, def: def}, name, usage)
	}
	size := func(name string, dst *int64, def int64, usage string) {
		fl.Var(&limitValue{lf: lf, dst: dst, def: def, size: true}, name, usage)
	}
	count("max-jobs", &lf.l.MaxJobs, traces.DefaultMaxJobs, "most jobs one trace read may produce")
	count("max-array-tasks", &lf.l.MaxArrayTasks, traces.DefaultMaxArrayTasks, "most jobs one read may expand from pending sacct array records (123_[0-99999])")
	size("max-decompressed", &lf.l.MaxDecompressed, 0, "most bytes a compressed trace may decompress to; auto: 100 times its size, at least 256M")
	size("max-record", &lf.l.MaxRecord, traces.DefaultMaxRecord, "longest line of a text trace, or JSON job object of a Philly log")
	size("max-metadata", &lf.l.MaxMetadata, traces.DefaultMaxMetadata, "largest Arrow or Parquet metadata structure (footer, message or page header, schema)")
	size("max-arrow-memory", &lf.l.MaxArrowMemory, traces.DefaultMaxArrowMemory, "most memory decoding an Arrow or Parquet file may hold at once")
	size("max-page", &lf.l.MaxPage, traces.DefaultMaxPage, "largest uncompressed Parquet page")
}

// limitValue is a --max-* flag: a count, or a size in bytes with an
// optional K, M, G or T suffix.
type limitValue struct {
	lf   *limitFlags
	dst  *int64
	def  int64
	size bool
}

func (v *limitValue) String() string {
	n := *v.dst
	if n == 0 {
		n = v.def
	}
	if n == 0 {
		return "auto"
	}
	if v.size {
		return traces.FormatSize(n)
	}
	return strconv.FormatInt(n, 10)
}

func (v *limitValue) Set(s string) error {
	var n int64
	var err error
	if v.size {
		n, err = traces.ParseSize(s)
	} else {
		n, err = strconv.ParseInt(s, 10, 64)
		if err != nil {
			err = fmt.Errorf("%q: want a whole number", s)
		}
	}
	if err == nil && n <= 0 {
		err = fmt.Errorf("%q: want a limit above 0", s)
	}
	if err != nil {
		return err
	}
	*v.dst = n
	v.lf.set()
	return nil
}

func (v *limitValue) Type() string {
	if v.size {
		return "size"
	}
	return "n"
}
