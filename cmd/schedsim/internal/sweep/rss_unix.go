//go:build unix

package sweep

import (
	"runtime"
	"syscall"
)

// peakRSS returns the process's peak resident set size in bytes
// (getrusage ru_maxrss: KiB on Linux, bytes on macOS).
func peakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.Sys)
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return ru.Maxrss
	}
	return ru.Maxrss * 1024
}
