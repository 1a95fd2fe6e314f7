//go:build !unix

package cli

// notifyResize: no SIGWINCH here; a question is drawn at the size it had.
func notifyResize() <-chan struct{} { return nil }
