//go:build !unix

package fence

import "os"

// Without flock the store is safe for one process only (Store.mu).
func lockFile(*os.File) error { return nil }
func unlockFile(*os.File)     {}
