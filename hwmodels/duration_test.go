package hwmodels

import (
	"errors"
	"testing"
)

func TestParseSlurmDuration(t *testing.T) {
	tests := []struct {
		in        string
		secs      int64
		unlimited bool
	}{
		{"UNLIMITED", 0, true},
		{"unlimited", 0, true},
		{"INFINITE", 0, true},
		{"Infinite", 0, true},
		{"-1", 0, true},
		{"0", 0, false},
		{"90", 90 * 60, false},                    // M
		{"10:30", 10*60 + 30, false},              // M:S
		{"90:00", 90 * 60, false},                 // M:S, minutes unbounded
		{"48:00:00", 48 * 3600, false},            // H:M:S, hours unbounded
		{"01:02:03", 3723, false},                 // H:M:S
		{"2-00:00:00", 2 * 86400, false},          // D-H:M:S
		{"1-2", 86400 + 2*3600, false},            // D-H
		{"1-2:30", 86400 + 2*3600 + 30*60, false}, // D-H:M
		{"7-23:59:59", 7*86400 + 23*3600 + 3599, false},
		{"365-00:00:00", 365 * 86400, false},
		{"999999999-23:59:59", 999999999*86400 + 86399, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			secs, unl, err := ParseSlurmDuration(tt.in)
			if err != nil {
				t.Fatalf("ParseSlurmDuration(%q): %v", tt.in, err)
			}
			if secs != tt.secs || unl != tt.unlimited {
				t.Errorf("ParseSlurmDuration(%q) = %d, %v; want %d, %v", tt.in, secs, unl, tt.secs, tt.unlimited)
			}
		})
	}
}

func TestParseSlurmDurationErrors(t *testing.T) {
	const forms = " (want UNLIMITED, M, M:S, H:M:S, D-H, D-H:M or D-H:M:S)"
	tests := []struct{ in, want string }{
		{"", `bad Slurm time "": empty` + forms},
		{"1:2:3:4", `bad Slurm time "1:2:3:4": too many ':'` + forms},
		{"1-2:3:4:5", `bad Slurm time "1-2:3:4:5": too many ':'` + forms},
		{"abc", `bad Slurm time "abc": bad number "abc"` + forms},
		{"-5", `bad Slurm time "-5": bad day count` + forms},
		{"1-", `bad Slurm time "1-": bad number ""` + forms},
		{"1-2-3", `bad Slurm time "1-2-3": bad number "2-3"` + forms},
		{"1.5", `bad Slurm time "1.5": bad number "1.5"` + forms},
		{" 60", `bad Slurm time " 60": bad number " 60"` + forms},
		{"+60", `bad Slurm time "+60": bad number "+60"` + forms},
		{"10:60", `bad Slurm time "10:60": seconds must be below 60` + forms},
		{"1:60:00", `bad Slurm time "1:60:00": minutes must be below 60` + forms},
		{"1-24", `bad Slurm time "1-24": hours must be below 24 after a day count` + forms},
		{"1-1:60", `bad Slurm time "1-1:60": minutes must be below 60` + forms},
		{"1234567890", `bad Slurm time "1234567890": bad number "1234567890"` + forms},
		{"UNLIMITEDx", `bad Slurm time "UNLIMITEDx": bad number "UNLIMITEDx"` + forms},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, _, err := ParseSlurmDuration(tt.in)
			if err == nil {
				t.Fatalf("ParseSlurmDuration(%q): no error, want %q", tt.in, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("ParseSlurmDuration(%q) error\n got: %s\nwant: %s", tt.in, err, tt.want)
			}
			if !errors.Is(err, ErrDuration) {
				t.Errorf("error does not wrap ErrDuration")
			}
		})
	}
}
