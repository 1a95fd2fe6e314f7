//go:build !linux

package artifact

import "os"

// syncData makes what f holds durable (fsync; fdatasync is Linux's).
func syncData(f *os.File) error { return f.Sync() }
