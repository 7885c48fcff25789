package reports

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange swaps directories a and b atomically: renameat2(2) with
// RENAME_EXCHANGE (Linux 3.15; ext4, XFS, Btrfs, tmpfs and others). A file
// system without it gives errNoExchange.
func exchange(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP) {
		return errNoExchange
	}
	return err
}
