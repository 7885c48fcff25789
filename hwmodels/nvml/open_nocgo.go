//go:build !cgo || !linux

package nvml

// Open returns ErrNoCgo: this binary was built without cgo (or for another
// OS than Linux), and go-nvml needs both.
func Open() (Source, error) { return nil, ErrNoCgo }
