package shellrisk

import (
	"strings"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// fdNumber reports whether the cleaned path p names one open file
// descriptor of the shell itself (/dev/fd/N, /proc/self/fd/N,
// /proc/thread-self/fd/N), and which.
func fdNumber(p string) (string, bool) {
	for _, pre := range [...]string{"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"} {
		if n, ok := strings.CutPrefix(p, pre); ok && n != "" && isDigits(n) {
			return n, true
		}
	}
	return "", false
}

// throughFd reports whether the path s (relative to cwd) goes on past an
// open file descriptor or a process's directory: /dev/fd/3/x,
// /proc/self/fd/3/../x, /dev/stdin/.ssh, /proc/1/cwd/x, /proc/self/root/x.
// A descriptor names whatever it is open on, and a redirection (3< ~,
// exec 3<~, < ~) opens one on a directory, so what such a path reaches,
// and what ".." after it means, is known only to the kernel: cleaning it
// lexically gives another path (/proc/self/fd/3/../../home/u/proj/x is no
// file of the project). It returns the part that names the descriptor.
func throughFd(s, cwd string) (string, bool) {
	if !strings.HasPrefix(s, "/") {
		if cwd == "" {
			return "", false
		}
		s = cwd + "/" + s
	}
	if !strings.HasPrefix(s, "/dev/") && !strings.HasPrefix(s, "/proc/") && !strings.Contains(s, "/..") && !strings.Contains(s, "//") && !strings.Contains(s, "/./") {
		return "", false
	}
	// Walk the components as the analyser does (".." lexically) until a
	// descriptor or process directory is reached; what follows it is
	// beyond lexical reading.
	var stack []string
	rest := s
	for rest != "" {
		var c string
		c, rest, _ = strings.Cut(rest, "/")
		switch c {
		case "", ".":
			continue
		case "..":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		stack = append(stack, c)
		if strings.Trim(rest, "/") == "" {
			break // nothing follows
		}
		if fdDir(stack) {
			return "/" + strings.Join(stack, "/"), true
		}
	}
	return "", false
}

// fdDir reports whether the components name an open descriptor or a
// directory of a process: dev/fd/N, dev/stdin, dev/stdout, dev/stderr,
// proc/P/fd/N, proc/P/task/T/fd/N, proc/P/cwd, proc/P/root,
// proc/P/map_files/X.
func fdDir(c []string) bool {
	switch {
	case len(c) == 3 && c[0] == "dev" && c[1] == "fd":
		return true
	case len(c) == 2 && c[0] == "dev" && (c[1] == "stdin" || c[1] == "stdout" || c[1] == "stderr"):
		return true
	case len(c) < 3 || c[0] != "proc":
		return false
	}
	if len(c) >= 5 && c[2] == "task" {
		c = append(c[:2:2], c[4:]...) // proc/P/task/T/fd/N is proc/P/fd/N
	}
	switch {
	case len(c) == 3:
		return c[2] == "cwd" || c[2] == "root"
	case len(c) == 4:
		return c[2] == "fd" || c[2] == "map_files"
	}
	return false
}

// isTerminal reports a path that may be the terminal the person answers
// questions on: /dev/tty, a pseudo-terminal, a console, and, for a write,
// the standard input (which a terminal opens for reading and writing).
// What is written there is not the command's output, which is escaped
// before it is shown: it can draw a forged line of the approval question.
func isTerminal(p string, write bool) bool {
	switch {
	case p == "/dev/tty", p == "/dev/console", p == "/dev/ptmx", strings.HasPrefix(p, "/dev/pts/"),
		strings.HasPrefix(p, "/dev/tty"), strings.HasPrefix(p, "/dev/vcs"):
		return true
	case write && p == "/dev/stdin":
		return true
	}
	if n, ok := fdNumber(p); ok && write && n == "0" {
		return true
	}
	return false
}

// terminalWrite records a write to the terminal device.
func (a *analyzer) terminalWrite(sp risk.Span, what string) {
	a.find(risk.Write, sp, what+" writes to the terminal device itself, past the escaping of the command's output, so it can draw a forged line of the approval question")
}
