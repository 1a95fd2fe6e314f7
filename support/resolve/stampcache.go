package resolve

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// stamp is what changes when a file's content, or a directory's entries,
// may have: the inode, the size (files only; a directory's is 0 here),
// and the modification and change times. A link added to a directory,
// removed, or put in another's place changes its times.
type stamp struct {
	ino          uint64
	size         int64
	mtime, ctime int64
}

// fileStamp is the stamp of a file lstat found with st.
func fileStamp(st *unix.Stat_t) stamp {
	return stamp{ino: st.Ino, size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}

// dirStamp is the stamp of a directory lstat found with st.
func dirStamp(st *unix.Stat_t) stamp {
	return stamp{ino: st.Ino, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}

// racyWindow: a file or directory changed this recently may change again
// within the same tick of the file system's clock, unseen by its stamp: it
// is not remembered (git's own racy-clean rule, for the same reason).
var racyWindow = 2 * time.Second

// racy reports whether st may change unseen: it changed within racyWindow
// before now (Unix nanoseconds), or after now (a clock set back, or a file
// stamped in the future).
func racy(st stamp, now int64) bool {
	return now-st.mtime < int64(racyWindow) || now-st.ctime < int64(racyWindow)
}

// stampCache remembers what was found of a file or directory, by path,
// while its stamp is unchanged. What was found of one changed within the
// racy window is not remembered. Past max entries the cache starts afresh.
// It is safe for concurrent use.
type stampCache[V any] struct {
	max int
	mu  sync.Mutex
	m   map[string]stamped[V]
}

type stamped[V any] struct {
	st stamp
	v  V
}

func newStampCache[V any](max int) *stampCache[V] { return &stampCache[V]{max: max} }

// get returns what was remembered of path, if its stamp then was st.
func (c *stampCache[V]) get(path string, st stamp) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[path]
	if !ok || e.st != st {
		var zero V
		return zero, false
	}
	return e.v, true
}

// put remembers v of path at stamp st, unless st is racy now.
func (c *stampCache[V]) put(path string, st stamp, v V) {
	c.putAt(path, st, v, time.Now().UnixNano())
}

func (c *stampCache[V]) putAt(path string, st stamp, v V, now int64) {
	if racy(st, now) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= c.max {
		c.m = make(map[string]stamped[V])
	}
	c.m[path] = stamped[V]{st, v}
}
