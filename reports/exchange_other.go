//go:build !linux && !darwin

package reports

// exchange cannot swap two directories atomically on this system.
func exchange(a, b string) error { return errNoExchange }
