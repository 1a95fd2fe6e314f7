//go:build !unix

package cli

// openNonblock: no non-blocking open here; the mode is checked after it.
const openNonblock = 0
