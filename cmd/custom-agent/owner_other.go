//go:build !unix

package main

import "io/fs"

// ownerOf: no owner id here.
func ownerOf(fs.FileInfo) (int, bool) { return 0, false }
