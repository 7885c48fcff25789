package conformance

import (
	"os"
	"testing"
)

func TestZZDebug(t *testing.T) {
	dir := os.Getenv("ZZREC")
	if dir == "" {
		t.Skip()
	}
	r, err := LoadRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Simulate(Model{}); err != nil {
		t.Fatal(err)
	}
}
