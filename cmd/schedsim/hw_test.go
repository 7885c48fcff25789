package main

import (
	"bytes"
	"strings"
	"testing"
)

// runHW runs schedsim with args in-process and returns stdout, the error
// and the exit status main would give it.
func runHW(t *testing.T, args ...string) (string, error, int) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err, exitStatus(err)
}

func TestMIGLayoutCommand(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string // in the output (code 0) or the error
	}{
		{"fits", []string{"--gpu", "a100-40gb", "4g.20gb,2g.10gb,1g.5gb"}, 0,
			"a100-40gb: 3 instances, 7 of 7 compute slices, 7 of 8 memory slices\n" +
				"PROFILE  ID  START  MEMORY SLICES  COMPUTE SLICES\n" +
				"4g.20gb  5   0      0-3            4\n" +
				"2g.10gb  14  4      4-5            2\n" +
				"1g.5gb   19  6      6              1\n"},
		{"catalog model name, separate args", []string{"--gpu", "h100-sxm-80gb", "3g.40gb", "3g.40gb"}, 0, "3g.40gb  9   4      4-7"},
		{"instance limit", []string{"--gpu", "a100-40gb", "4g.20gb,4g.20gb"}, 1, "2 × 4g.20gb: at most 1 per GPU"},
		{"too many slices", []string{"--gpu", "h100-80gb", "4g.40gb,3g.40gb,1g.10gb"}, 1, "needs 9 memory slices"},
		{"seed's 7 x 1g.20gb", []string{"--gpu", "h100-80gb", "1g.20gb,1g.20gb,1g.20gb,1g.20gb,1g.20gb,1g.20gb,1g.20gb"}, 1, "at most 4 per GPU"},
		{"unknown profile", []string{"--gpu", "a100-40gb", "1g.7gb"}, 2, `unknown MIG profile "1g.7gb"`},
		{"unknown model", []string{"--gpu", "a200", "1g.5gb"}, 2, `unknown GPU model "a200"`},
		{"model without MIG table", []string{"--gpu", "l4-24gb", "1g.5gb"}, 2, "unknown GPU model"},
		{"no gpu flag", []string{"1g.5gb"}, 2, "--gpu is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err, code := runHW(t, append([]string{"hw", "mig-layout"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d (err %v, out %q)", code, tt.code, err, out)
			}
			got := out
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("got %q\nwant it to contain %q", got, tt.want)
			}
		})
	}
}

func TestHWCatalogCommand(t *testing.T) {
	out, err, _ := runHW(t, "hw", "catalog")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"h100-sxm-80gb   h100  80 GB   3350 GB/s  989 TFLOPS  700 W  70 W  gen4 900 GB/s nvswitch  h100-80gb",
		"dgx-h100",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("catalog lacks %q:\n%s", want, out)
		}
	}
}
