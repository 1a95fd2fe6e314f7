//go:build !linux

package journal

import "os"

// datasync syncs f (fsync where fdatasync is not offered).
func datasync(f *os.File) error { return f.Sync() }
