package permission

import (
	"path"
	"strings"
)

// hasDotDot reports whether p has a ".." component.
func hasDotDot(p string) bool {
	for i := 0; i+1 < len(p); i++ {
		if p[i] == '.' && p[i+1] == '.' && (i == 0 || p[i-1] == '/') && (i+2 == len(p) || p[i+2] == '/') {
			return true
		}
	}
	return false
}

// physical returns the path the kernel reaches for abs, an absolute path
// that may hold "." and ".." components, using the links the caller
// resolved: after each component, a prefix found in resolved is replaced by
// its resolution, and a later ".." climbs from there, as the kernel does.
// Entries are taken as fully resolved, so the walk is linear in the number
// of components.
func physical(abs string, resolved map[string]string) string {
	cur := "/"
	for rest := abs; rest != ""; {
		var comp string
		comp, rest, _ = strings.Cut(rest, "/")
		switch comp {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		if cur == "/" {
			cur = "/" + comp
		} else {
			cur = cur + "/" + comp
		}
		if r, ok := resolved[cur]; ok && strings.HasPrefix(r, "/") {
			cur = path.Clean(r)
		}
	}
	return cur
}
