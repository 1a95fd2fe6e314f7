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

// maxLooseObject bounds the loose object read to check it.
const maxLooseObject = 1 << 30

// checkObjects checks what changed in the object store since the
// snapshot was taken (by change time, which a command cannot set back).
func (s *gitState) checkObjects() (notes, errs []string) {
	objects := filepath.Join(s.dir, "objects")
	since := s.taken.Add(-time.Second)
	changed := func(path string) bool {
		fi, err := os.Lstat(path)
		if err != nil {
			return false
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		return !ok || !time.Unix(st.Ctim.Sec, st.Ctim.Nsec).Before(since)
	}
	remove := func(path, why string) {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Sprintf("%s (%s) could not be removed: %v", quote(path), why, err))
			return
		}
		notes = append(notes, fmt.Sprintf("removed %s: %s", quote(path), why))
	}
	for i := range 256 {
		dir := filepath.Join(objects, fmt.Sprintf("%02x", i))
		if !changed(dir) {
			continue
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			path := filepath.Join(dir, e.Name())
			if !changed(path) {
				continue
			}
			if why := verifyLoose(path, filepath.Base(dir)+e.Name()); why != "" {
				remove(path, why+" (git would read it as that object; run git fsck)")
			}
		}
	}
	for _, cache := range []string{filepath.Join(objects, "info", "commit-graph"), filepath.Join(objects, "pack", "multi-pack-index")} {
		if changed(cache) {
			remove(cache, "a cache mapping object ids, which the call changed and git writes again")
		}
	}
	if graphs := filepath.Join(objects, "info", "commit-graphs"); changed(graphs) {
		ents, _ := os.ReadDir(graphs)
		for _, e := range ents {
			if changed(filepath.Join(graphs, e.Name())) {
				remove(filepath.Join(graphs, e.Name()), "a cache mapping object ids, which the call changed and git writes again")
			}
		}
	}
	pack := filepath.Join(objects, "pack")
	if !changed(pack) {
		return notes, errs
	}
	ents, _ := os.ReadDir(pack)
	seen := map[string]bool{}
	for _, e := range ents {
		base, ok := strings.CutSuffix(e.Name(), ".pack")
		if !ok {
			base, ok = strings.CutSuffix(e.Name(), ".idx")
		}
		if !ok || seen[base] || !(changed(filepath.Join(pack, base+".pack")) || changed(filepath.Join(pack, base+".idx"))) {
			continue
		}
		seen[base] = true
		if why := verifyPack(filepath.Join(pack, base)); why != "" {
			for _, ext := range []string{".pack", ".idx", ".rev", ".bitmap", ".keep", ".promisor", ".mtimes"} {
				if _, err := os.Lstat(filepath.Join(pack, base+ext)); err == nil {
					remove(filepath.Join(pack, base+ext), why)
				}
			}
		}
	}
	return notes, errs
}

// verifyLoose says why a loose object file does not hold the object its
// name says, or "".
func verifyLoose(path, id string) string {
	var h hash.Hash
	switch len(id) {
	case 40:
		h = sha1.New()
	case 64:
		h = sha256.New()
	default:
		return "" // not an object file (a temporary, a pack's)
	}
	if _, err := hex.DecodeString(id); err != nil {
		return ""
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "it cannot be read to check it"
	}
	defer f.Close()
	z, err := zlib.NewReader(f)
	if err != nil {
		return "it is not a git object"
	}
	if n, err := io.Copy(h, io.LimitReader(z, maxLooseObject)); err != nil || n == maxLooseObject {
		return "it cannot be read to check it"
	}
	if hex.EncodeToString(h.Sum(nil)) != strings.ToLower(id) {
		return "its content is not the object its name says"
	}
	return ""
}

// verifyPack says why a pack and its index disagree (an id the index
// names at an offset where the pack holds another object), or "".
func verifyPack(base string) string {
	idxFile, err := os.Open(base + ".idx")
	if err != nil {
		return "its index cannot be read"
	}
	defer idxFile.Close()
	onDisk := idxfile.NewMemoryIndex()
	if err := idxfile.NewDecoder(idxFile).Decode(onDisk); err != nil {
		return "its index cannot be read: " + err.Error()
	}
	packFile, err := os.Open(base + ".pack")
	if err != nil {
		return "the pack cannot be read"
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
