//go:build unix

package reports

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// dirLock is an exclusive flock(2) on a lock file. The kernel drops it
// when the process dies, however it dies, so a killed writer never
// leaves a lock that refuses the next one; the file it leaves is reused.
type dirLock struct {
	f    *os.File
	path string
}

// lockFile takes the lock on path without waiting: a *BusyError when
// another process holds it. The file holds the holder's pid.
func lockFile(path string) (*dirLock, error) {
	for range 10 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			pid := readPID(f)
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, &BusyError{PID: pid}
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		// A holder that released the lock removes the file first: if it
		// did so after we opened it, our lock is on a file nobody else
		// will open. Lock the one at path instead.
		fst, ferr := f.Stat()
		pst, perr := os.Stat(path)
		if ferr != nil || perr != nil || !os.SameFile(fst, pst) {
			f.Close()
			continue
		}
		if err := f.Truncate(0); err == nil {
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
		return &dirLock{f: f, path: path}, nil
	}
	return nil, fmt.Errorf("lock %s: the lock file kept being replaced", path)
}

// release removes the lock file, while still holding the lock, and drops
// the lock.
func (l *dirLock) release() {
	if l == nil || l.f == nil {
		return
	}
	os.Remove(l.path)
	l.f.Close()
	l.f = nil
}

func readPID(f *os.File) int {
	b := make([]byte, 32)
	n, err := f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil {
		return 0
	}
	return pid
}

// sameDevice reports whether a and b are on one file system (a rename
// between them can work). It says yes when it cannot tell.
func sameDevice(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return true
	}
	sb, err := os.Stat(b)
	if err != nil {
		return true
	}
	da, ok1 := sa.Sys().(*syscall.Stat_t)
	db, ok2 := sb.Sys().(*syscall.Stat_t)
	return !ok1 || !ok2 || da.Dev == db.Dev
}
