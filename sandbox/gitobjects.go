package sandbox

import (
	"compress/zlib"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/custom-agent/custom-agent/sandbox/enforce"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// git does not hash an object again when it reads it: a command that
// replaces the loose file of an existing tree (or adds a pack, or an
// index of packs, that maps an existing id to other content) changes
// what the next checkout writes with no ref moving (the seventh review,
// R10). So what the call wrote in objects/ is checked: each loose object
// and pack against its name, and the caches that map ids to places
// (multi-pack-index, commit-graph) are removed when the call changed
// them; git works without them and writes them again.
//
// The check runs on the host, unconfined, so it works beneath the git
// directory only (os.Root), descends only into plain directories, opens
// nothing but plain files with one name and never blocks on one (the
// eighth review: a link in objects/ made it delete files elsewhere, a
// FIFO hung it, hard links to one zlib bomb kept it busy for hours).

// Bounds of the object check: one loose object inflates to at most
// looseRatio times its size (zlib cannot do better than about 1032), and
// all of them together to maxInflated; past that the rest are removed
// unchecked.
const (
	looseRatio  = 1100
	maxInflated = 8 << 30
)

// checkObjects checks what changed in the object store since the
// snapshot was taken (by change time, which a command cannot set back).
func (s *gitState) checkObjects() (notes, errs []string) {
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return nil, []string{"the objects of " + quote(s.dir) + " could not be checked: " + err.Error()}
	}
	defer root.Close()
	since := s.taken.Add(-time.Second)
	stat := func(rel string) (fs.FileInfo, bool) {
		fi, err := root.Lstat(rel)
		if err != nil {
			return nil, false
		}
		return fi, enforce.ChangedSince(fi, since)
	}
	remove := func(rel, why string) {
		if err := root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Sprintf("%s (%s) could not be removed: %v", quote(filepath.Join(s.dir, rel)), why, err))
			return
		}
		notes = append(notes, fmt.Sprintf("removed %s: %s", quote(filepath.Join(s.dir, rel)), why))
	}
	// dir lists a directory the call changed, if it is a plain one; a
	// link or anything else where git keeps a directory is removed.
	dir := func(rel string) ([]fs.DirEntry, bool) {
		fi, changed := stat(rel)
		switch {
		case fi == nil:
			return nil, false
		case !fi.IsDir():
			remove(rel, "not a directory where git keeps its objects (git would read objects from wherever it points)")
			return nil, false
		case !changed:
			return nil, false
		}
		f, err := root.Open(rel)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s could not be read to check it: %v", quote(filepath.Join(s.dir, rel)), err))
			return nil, false
		}
		defer f.Close()
		ents, err := f.ReadDir(-1)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s could not be read to check it: %v", quote(filepath.Join(s.dir, rel)), err))
		}
		return ents, true
	}
	if fi, _ := stat("objects"); fi == nil || !fi.IsDir() {
		if fi != nil {
			errs = append(errs, quote(filepath.Join(s.dir, "objects"))+" is not a directory; git's objects were not checked")
		}
		return notes, errs
	}
	budget := int64(maxInflated)
	for i := range 256 {
		sub := filepath.Join("objects", fmt.Sprintf("%02x", i))
		ents, _ := dir(sub)
		for _, e := range ents {
			rel := filepath.Join(sub, e.Name())
			if _, changed := stat(rel); !changed {
				continue
			}
			if why := verifyLoose(root, rel, filepath.Base(sub)+e.Name(), &budget); why != "" {
				remove(rel, why+" (git would read it as that object; run git fsck)")
			}
		}
	}
	for _, cache := range []string{filepath.Join("objects", "info", "commit-graph"), filepath.Join("objects", "pack", "multi-pack-index")} {
		if _, changed := stat(cache); changed {
			remove(cache, "a cache mapping object ids, which the call changed and git writes again")
		}
	}
	info := filepath.Join("objects", "info")
	if fi, _ := stat(info); fi != nil && !fi.IsDir() {
		remove(info, "not a directory where git keeps its object caches")
	}
	graphs := filepath.Join(info, "commit-graphs")
	if ents, ok := dir(graphs); ok {
		for _, e := range ents {
			if _, changed := stat(filepath.Join(graphs, e.Name())); changed {
				remove(filepath.Join(graphs, e.Name()), "a cache mapping object ids, which the call changed and git writes again")
			}
		}
	}
	pack := filepath.Join("objects", "pack")
	ents, _ := dir(pack)
	// A pack's companions git reads with it: the reverse index, the
	// bitmap and the mtimes are caches git writes again, so one the call
	// made or changed goes; a .keep or .promisor goes when it is not a
	// plain file (a pipe there makes the host's git hang on it).
	for _, e := range ents {
		rel := filepath.Join(pack, e.Name())
		switch filepath.Ext(e.Name()) {
		case ".rev", ".bitmap", ".mtimes":
			if fi, changed := stat(rel); fi != nil && (changed || !fi.Mode().IsRegular()) {
				remove(rel, "a cache of a pack, which the call made or changed and git writes again")
			}
		case ".keep", ".promisor":
			if fi, _ := stat(rel); fi != nil && !fi.Mode().IsRegular() {
				remove(rel, "not a plain file where git reads a pack's marker")
			}
		}
	}
	seen := map[string]bool{}
	for _, e := range ents {
		base, ok := strings.CutSuffix(e.Name(), ".pack")
		if !ok {
			base, ok = strings.CutSuffix(e.Name(), ".idx")
		}
		if !ok || seen[base] {
			continue
		}
		_, packChanged := stat(filepath.Join(pack, base+".pack"))
		_, idxChanged := stat(filepath.Join(pack, base+".idx"))
		if !packChanged && !idxChanged {
			continue
		}
		seen[base] = true
		if why := verifyPack(root, filepath.Join(pack, base)); why != "" {
			for _, ext := range []string{".pack", ".idx", ".rev", ".bitmap", ".keep", ".promisor", ".mtimes"} {
				if _, err := root.Lstat(filepath.Join(pack, base+ext)); err == nil {
					remove(filepath.Join(pack, base+ext), why)
				}
			}
		}
	}
	return notes, errs
}

// openPlain opens a file beneath root for reading: a plain file with one
// name, without following a link or blocking on a FIFO.
func openPlain(root *os.Root, rel string) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.Mode().IsRegular() || !ok || st.Nlink != 1 {
		f.Close()
		return nil, nil, errors.New("not a plain file with one name")
	}
	return f, fi, nil
}

// verifyLoose says why a loose object file does not hold the object its
// name says, or "". budget is what may still be inflated, for all.
func verifyLoose(root *os.Root, rel, id string, budget *int64) string {
	var h hash.Hash
	switch len(id) {
	case 40:
		h = sha1.New()
	case 64:
		h = sha256.New()
	default:
		return "" // not an object file (a temporary one)
	}
	if _, err := hex.DecodeString(id); err != nil {
		return ""
	}
	f, fi, err := openPlain(root, rel)
	if err != nil {
		return "it is " + err.Error()
	}
	defer f.Close()
	limit := min(fi.Size()*looseRatio+4096, *budget)
	if limit <= 0 {
		return "the check's bound on what it inflates was reached"
	}
	z, err := zlib.NewReader(f)
	if err != nil {
		return "it is not a git object"
	}
	n, err := io.Copy(h, io.LimitReader(z, limit))
	*budget -= n
	if err != nil || n == limit {
		return "it inflates to more than a git object can"
	}
	if hex.EncodeToString(h.Sum(nil)) != strings.ToLower(id) {
		return "its content is not the object its name says"
	}
	return ""
}

// verifyPack says why a pack and its index disagree (an id the index
// names at an offset where the pack holds another object), or "".
func verifyPack(root *os.Root, base string) string {
	idxFile, _, err := openPlain(root, base+".idx")
	if err != nil {
		return "its index is " + err.Error()
	}
	defer idxFile.Close()
	onDisk := idxfile.NewMemoryIndex()
	if err := idxfile.NewDecoder(idxFile).Decode(onDisk); err != nil {
		return "its index cannot be read: " + err.Error()
	}
	packFile, _, err := openPlain(root, base+".pack")
	if err != nil {
		return "the pack is " + err.Error()
	}
	defer packFile.Close()
	var w idxfile.Writer
	parser, err := packfile.NewParser(packfile.NewScanner(packFile), &w)
	if err != nil {
		return "the pack cannot be read: " + err.Error()
	}
	if _, err := parser.Parse(); err != nil {
		return "the pack cannot be read: " + err.Error()
	}
	computed, err := w.Index()
	if err != nil {
		return "the pack cannot be read: " + err.Error()
	}
	entries, err := onDisk.Entries()
	if err != nil {
		return "its index cannot be read: " + err.Error()
	}
	defer entries.Close()
	n := 0
	for {
		e, err := entries.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "its index cannot be read: " + err.Error()
		}
		n++
		off, err := computed.FindOffset(e.Hash)
		if err != nil || uint64(off) != e.Offset {
			return "its index names " + e.Hash.String()[:12] + " where the pack holds another object"
		}
	}
	if count, err := computed.Count(); err != nil || count != int64(n) {
		return "its index and the pack do not list the same objects"
	}
	return ""
}
