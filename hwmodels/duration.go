package hwmodels

import (
	"errors"
	"fmt"
	"strings"
)

// ErrDuration is wrapped by every error ParseSlurmDuration returns.
var ErrDuration = errors.New("bad Slurm time")

type durationError struct{ msg string }

func (e *durationError) Error() string { return e.msg }
func (e *durationError) Unwrap() error { return ErrDuration }

// durationForms lists the accepted forms, for messages.
const durationForms = "want UNLIMITED, M, M:S, H:M:S, D-H, D-H:M or D-H:M:S"

// maxDurationDigits bounds each number of a Slurm time, so the total fits an
// int64 with room to spare (999,999,999 days is about 8.6e13 s).
const maxDurationDigits = 9

// ParseSlurmDuration parses a Slurm time string, as used by --time,
// MaxTime, DefaultTime and sacct's Timelimit, into whole seconds.
//
// The forms are Slurm's (src/common/parse_time.c, time_str2secs): "M"
// (minutes), "M:S", "H:M:S", "D-H", "D-H:M" and "D-H:M:S". "UNLIMITED",
// "INFINITE" (any case) and "-1" mean no limit: seconds is 0 and unlimited
// is true. The leading number is unbounded ("90" is 90 minutes, "48:00:00"
// 48 hours); the numbers after it must be in range: minutes and seconds
// below 60, hours after a day count below 24 (Slurm itself does not check
// this; output it writes always satisfies it). Each number has 1 to 9 digits;
// signs, spaces and fractions are errors. Note that the result is in seconds
// while Slurm stores limits in minutes, rounding seconds up (time_str2mins);
// callers that model a limit apply that rounding themselves.
//
// Errors wrap ErrDuration and quote s and the accepted forms.
func ParseSlurmDuration(s string) (seconds int64, unlimited bool, err error) {
	if strings.EqualFold(s, "UNLIMITED") || strings.EqualFold(s, "INFINITE") || s == "-1" {
		return 0, true, nil
	}
	fail := func(why string) (int64, bool, error) {
		return 0, false, &durationError{msg: fmt.Sprintf("bad Slurm time %q: %s (%s)", s, why, durationForms)}
	}
	if s == "" {
		return fail("empty")
	}
	var days int64
	hasDays := false
	rest := s
	if d, r, ok := strings.Cut(s, "-"); ok {
		v, ok := durationNumber(d)
		if !ok {
			return fail("bad day count")
		}
		days, hasDays, rest = v, true, r
	}
	parts := strings.Split(rest, ":")
	var nums [3]int64
	for i, p := range parts {
		if i >= 3 {
			return fail("too many ':'")
		}
		v, ok := durationNumber(p)
		if !ok {
			return fail(fmt.Sprintf("bad number %q", p))
		}
		nums[i] = v
	}
	var h, m, sec int64
	switch {
	case hasDays:
		// D-H, D-H:M, D-H:M:S
		h, m, sec = nums[0], nums[1], nums[2]
		if h >= 24 {
			return fail("hours must be below 24 after a day count")
		}
	case len(parts) == 1: // M
		m = nums[0]
	case len(parts) == 2: // M:S
		m, sec = nums[0], nums[1]
	default: // H:M:S
		h, m, sec = nums[0], nums[1], nums[2]
	}
	if (hasDays || len(parts) == 3) && m >= 60 {
		return fail("minutes must be below 60")
	}
	if sec >= 60 {
		return fail("seconds must be below 60")
	}
	return days*86400 + h*3600 + m*60 + sec, false, nil
}

// durationNumber parses 1 to maxDurationDigits decimal digits.
func durationNumber(s string) (int64, bool) {
	if s == "" || len(s) > maxDurationDigits {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}
