package bundle

import (
	"github.com/schedsim/schedsim/hwmodels"
	"strconv"
	"strings"
)

// parseScontrol reads scontrol show config's "Key = Value" lines (the
// first of each key; section headings and the "Configuration data as of"
// line have no " = ").
func parseScontrol(data []byte) map[string]string {
	out := map[string]string{}
	for l := range strings.SplitSeq(string(data), "\n") {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		if k == "" || strings.ContainsAny(k, " \t") {
			continue
		}
		lk := strings.ToLower(k)
		if _, dup := out[lk]; !dup {
			out[lk] = strings.TrimSpace(v)
		}
	}
	return out
}

// confValue is hwmodels.SlurmConfValue.
func confValue(conf []byte, key string) (string, bool) {
	return hwmodels.SlurmConfValue(conf, key)
}

// scontrolKeys are the settings slurm.conf may leave to defaults that
// the replay reads (the slurm policy through the imported cluster's slurm
// section, the controller settings below); scontrol show config prints
// each with its value in effect.
var scontrolKeys = []string{
	"SchedulerParameters", "PriorityType", "PriorityWeightAge", "PriorityWeightFairshare", "PriorityWeightJobSize",
	"PriorityWeightPartition", "PriorityWeightQOS", "PriorityWeightAssoc", "PriorityWeightTRES", "PriorityMaxAge",
	"PriorityDecayHalfLife", "PriorityCalcPeriod", "PriorityUsageResetPeriod", "PriorityFavorSmall", "PriorityFlags",
	"FairShareDampeningFactor", "PreemptType", "PreemptMode", "PreemptExemptTime", "DefCpuPerGPU", "DefMemPerCPU",
	"DefMemPerGPU", "TRESBillingWeights", "KillWait", "OverTimeLimit", "JobRequeue", "EnforcePartLimits", "SelectType",
}

// scontrolSetting turns scontrol's spelling of a value into
// slurm.conf's: "2 sec" → 2, "0 min" → 0, PriorityCalcPeriod
// "00:05:00" → 5 (minutes); ok is false for unset values ("(null)",
// "n/a", empty) and for an empty priority flag list.
func scontrolSetting(key, v string) (string, bool) {
	switch strings.ToLower(v) {
	case "", "(null)", "n/a", "none":
		if !strings.EqualFold(key, "PreemptMode") && !strings.EqualFold(key, "PriorityFlags") {
			return "", false
		}
		if v == "" || v == "(null)" {
			return "", false
		}
	}
	for _, unit := range []string{" sec", " min", " secs"} {
		if n, ok := strings.CutSuffix(v, unit); ok {
			v = n
		}
	}
	switch strings.ToLower(key) {
	case "prioritycalcperiod":
		if s, ok := slurmDuration(v); ok && s%60 == 0 {
			return strconv.FormatInt(s/60, 10), true
		}
		return "", false
	case "defcpupergpu", "defmempercpu", "defmempergpu":
		if v == "UNLIMITED" || v == "0" {
			return "", false
		}
	}
	return v, true
}

// slurmDuration reads minutes, MM:SS, HH:MM:SS or D-HH:MM:SS into
// seconds.
func slurmDuration(s string) (int64, bool) {
	var days int64
	if d, r, ok := strings.Cut(s, "-"); ok {
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil || n < 0 {
			return 0, false
		}
		days, s = n, r
	}
	parts := strings.Split(s, ":")
	var v [3]int64
	for i, p := range parts {
		if i >= 3 {
			return 0, false
		}
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 || n > 1<<31 {
			return 0, false
		}
		v[i] = n
	}
	switch len(parts) {
	case 1:
		if days > 0 {
			return days*86400 + v[0]*3600, true
		}
		return v[0] * 60, true
	case 2:
		if days > 0 {
			return days*86400 + v[0]*3600 + v[1]*60, true
		}
		return v[0]*60 + v[1], true
	default:
		return days*86400 + v[0]*3600 + v[1]*60 + v[2], true
	}
}

// setting returns a setting: slurm.conf's, else scontrol show config's.
func (r *builder) setting(key string) (string, bool) {
	if v, ok := confValue(r.conf, key); ok {
		return v, true
	}
	if v, ok := r.scontrol[strings.ToLower(key)]; ok {
		return scontrolSetting(key, v)
	}
	return "", false
}

func (r *builder) settingInt(key string, def int64) int64 {
	if v, ok := r.setting(key); ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			return n
		}
	}
	return def
}
