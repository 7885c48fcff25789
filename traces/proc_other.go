//go:build !unix

package traces

// processAlive cannot ask the system here and says yes: a leftover is then
// stale only by age (StaleAfter).
func processAlive(pid int) bool { return true }
