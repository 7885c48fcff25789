package reports

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange swaps directories a and b atomically: renamex_np(2) with
// RENAME_SWAP (APFS). A file system without it gives errNoExchange.
func exchange(a, b string) error {
	err := unix.RenamexNp(a, b, unix.RENAME_SWAP)
	if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EINVAL) {
		return errNoExchange
	}
	return err
}
