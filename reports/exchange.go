package reports

import "errors"

// errNoExchange says that the system or file system cannot swap two
// directories atomically; the writer then moves files in one by one.
var errNoExchange = errors.New("no atomic directory exchange here")
