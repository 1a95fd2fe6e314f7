package resolve

import (
	"testing"
	"time"
)

// TestStampCacheRacyWindow: what was found of a file or directory is
// remembered only when its stamp is older than the racy window, so that a
// change within the same tick of the file system's clock is never hidden
// behind a stamp that did not move.
func TestStampCacheRacyWindow(t *testing.T) {
	const now = int64(1_000_000) * int64(time.Second)
	w := int64(racyWindow)
	old := now - w - 1
	tests := []struct {
		name         string
		mtime, ctime int64
		remembered   bool
	}{
		{"both older than the window", old, old, true},
		{"changed exactly one window ago", now - w, now - w, true},
		{"modified within the window", now - w + 1, old, false},
		{"inode changed within the window", old, now - w + 1, false},
		{"modified just now", now, now, false},
		{"stamped in the future (clock set back)", now + w, now + w, false},
		{"ctime in the future only", old, now + 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := stamp{ino: 7, size: 10, mtime: tc.mtime, ctime: tc.ctime}
			if got := racy(st, now); got == tc.remembered {
				t.Errorf("racy = %v, want %v", got, !tc.remembered)
			}
			c := newStampCache[string](8)
			c.putAt("/p", st, "found", now)
			v, ok := c.get("/p", st)
			if ok != tc.remembered || (ok && v != "found") {
				t.Errorf("get = %q, %v; want remembered %v", v, ok, tc.remembered)
			}
		})
	}
}

// TestStampCacheStamp: an entry answers only for the stamp it was found
// at; any part of the stamp changed, or another path, misses.
func TestStampCacheStamp(t *testing.T) {
	const now = int64(1_000_000) * int64(time.Second)
	old := now - 10*int64(racyWindow)
	st := stamp{ino: 7, size: 10, mtime: old, ctime: old}
	c := newStampCache[int](8)
	c.putAt("/p", st, 42, now)
	if v, ok := c.get("/p", st); !ok || v != 42 {
		t.Fatalf("get = %d, %v; want 42, true", v, ok)
	}
	for name, other := range map[string]stamp{
		"inode": {ino: 8, size: 10, mtime: old, ctime: old},
		"size":  {ino: 7, size: 11, mtime: old, ctime: old},
		"mtime": {ino: 7, size: 10, mtime: old + 1, ctime: old},
		"ctime": {ino: 7, size: 10, mtime: old, ctime: old + 1},
	} {
		if _, ok := c.get("/p", other); ok {
			t.Errorf("another %s answers from the cache", name)
		}
	}
	if _, ok := c.get("/q", st); ok {
		t.Error("another path answers from the cache")
	}
}

// TestStampCacheBounded: past its bound the cache starts afresh.
func TestStampCacheBounded(t *testing.T) {
	const now = int64(1_000_000) * int64(time.Second)
	old := now - 10*int64(racyWindow)
	c := newStampCache[int](4)
	for i := range 5 {
		c.putAt(string(rune('a'+i)), stamp{ino: uint64(i), mtime: old, ctime: old}, i, now)
	}
	if len(c.m) > 4 {
		t.Errorf("%d entries, want at most 4", len(c.m))
	}
	if v, ok := c.get("e", stamp{ino: 4, mtime: old, ctime: old}); !ok || v != 4 {
		t.Errorf("the last entry put is not remembered: %d, %v", v, ok)
	}
}
