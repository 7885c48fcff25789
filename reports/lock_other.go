//go:build !unix

package reports

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/schedsim/schedsim/traces"
)

// dirLock is a lock file created with O_EXCL holding the holder's pid.
// Without flock a killed writer leaves it: it is broken when stale
// (traces.Stale: here, older than traces.StaleAfter).
type dirLock struct{ path string }

func lockFile(path string) (*dirLock, error) {
	for range 2 {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, werr := f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				os.Remove(path)
				return nil, werr
			}
			return &dirLock{path: path}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		b, _ := os.ReadFile(path)
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		st, serr := os.Stat(path)
		if serr != nil || !traces.Stale(pid, st.ModTime(), time.Now()) {
			return nil, &BusyError{PID: pid}
		}
		os.Remove(path)
	}
	return nil, fmt.Errorf("lock %s: could not take it", path)
}

func (l *dirLock) release() {
	if l == nil || l.path == "" {
		return
	}
	os.Remove(l.path)
	l.path = ""
}

func sameDevice(a, b string) bool { return true }
