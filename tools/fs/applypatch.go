package fs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/tool"
)

// ApplyPatch is the apply_patch tool. It applies a unified diff (as `git
// diff` or `diff -u` write it) to one or more files, all or nothing:
//
//   - every hunk of every file is checked and every new content computed
//     in memory first; if any hunk does not apply, no file is touched and
//     the error names the file, the hunk, and the first line that differs;
//   - the new contents are then written to synced temporary files beside
//     their files, and only when all are written are they renamed into
//     place; if a rename or removal fails, the files already changed are
//     restored from memory.
//
// Context and removed lines must match exactly (no fuzz), but a hunk may
// sit a few lines away from where its header says; the output notes it.
// `--- /dev/null` creates a file (it must not exist; parents are created;
// git's "new file mode 100755" is honoured), `+++ /dev/null` deletes one
// (the hunk must remove all of it). Git's a/ and b/ prefixes are removed
// when both names have them; names are relative to the working directory.
// Renames, copies, mode changes and binary patches are refused.
//
// The files written are exactly those permission.PatchPaths finds, the
// files the engine judged; a patch that this parser reads differently is
// refused. Output is one line a file, e.g.
//
//	patched main.go: 2 hunks, +5 -3 lines (hunk 2 matched at line 57, 3 lines after where its header says)
//	created docs/new.md: +12 lines
//	deleted old.txt: -40 lines
type ApplyPatch struct {
	// failCommit, when set (in tests), makes the commit of the i-th
	// change fail, to test the restore.
	failCommit func(i int) error
}

var _ tool.Tool = (*ApplyPatch)(nil)

// Info returns apply_patch's metadata.
func (*ApplyPatch) Info() permission.ToolInfo { return builtin("apply_patch") }

// change is what a patch does to one file, computed before anything is
// written.
type change struct {
	fp       *filePatch
	dst      string // the file written or removed
	old, new string
	info     fs.FileInfo // the existing file's, nil for a new one
	perm     fs.FileMode
	notes    []string
	add, del int // lines added and removed
}

type patchSummary struct {
	Files []patchFile `json:"files"`
}

type patchFile struct {
	Path    string `json:"path"`
	Action  string `json:"action"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
}

// Run applies the patch argument.
func (t *ApplyPatch) Run(ctx context.Context, call tool.Call, out tool.Output) (tool.Result, error) {
	patch := call.String("patch")
	files, err := parsePatch(patch)
	if err != nil {
		return tool.Result{}, err
	}
	if err := sameFiles(patch, files); err != nil {
		return tool.Result{}, err
	}
	changes := make([]*change, 0, len(files))
	for _, f := range files {
		p, err := resolve(pathEnv(call), f.name())
		if err != nil {
			return tool.Result{}, err
		}
		c, err := prepare(f, p)
		if err != nil {
			return tool.Result{}, noChange(err)
		}
		for _, prev := range changes {
			if sameFile(prev, c) {
				return tool.Result{}, fmt.Errorf("%s and %s are the same file; put all of a file's hunks in one part of the patch; no file was changed", prev.fp.name(), f.name())
			}
		}
		changes = append(changes, c)
	}
	if err := cancelled(ctx); err != nil {
		return tool.Result{}, err
	}
	if err := t.commit(ctx, changes); err != nil {
		return tool.Result{}, err
	}
	var sum patchSummary
	var b strings.Builder
	for _, c := range changes {
		action := "patched"
		switch {
		case c.fp.creates():
			action = "created"
		case c.fp.deletes():
			action = "deleted"
		}
		sum.Files = append(sum.Files, patchFile{Path: c.fp.name(), Action: action, Added: c.add, Removed: c.del})
		fmt.Fprintf(&b, "%s %s: ", action, c.fp.name())
		if action == "patched" {
			fmt.Fprintf(&b, "%d hunk%s, ", len(c.fp.hunks), plural(len(c.fp.hunks), "", "s"))
		}
		fmt.Fprintf(&b, "%s lines", lineCounts(c.add, c.del, action))
		if len(c.notes) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(c.notes, "; "))
		}
		b.WriteByte('\n')
	}
	if _, err := fmt.Fprint(out.Stdout, b.String()); err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Summary: summary(sum)}, nil
}

func lineCounts(add, del int, action string) string {
	switch action {
	case "created":
		return fmt.Sprintf("+%d", add)
	case "deleted":
		return fmt.Sprintf("-%d", del)
	}
	return fmt.Sprintf("+%d -%d", add, del)
}

// sameFiles refuses a patch whose files this parser reads differently from
// permission.PatchPaths, which gave the engine the files to judge.
func sameFiles(patch string, files []*filePatch) error {
	var judged, ours []string
	for _, p := range permission.PatchPaths(patch) {
		judged = append(judged, p.Path)
	}
	for _, f := range files {
		ours = append(ours, f.name())
	}
	slices.Sort(judged)
	slices.Sort(ours)
	judged, ours = slices.Compact(judged), slices.Compact(ours)
	if !slices.Equal(judged, ours) {
		return fmt.Errorf("the permission check read this patch as changing %s, but its file parts change %s; apply_patch will not write files that were not judged. Give each file one `--- a/name` / `+++ b/name` pair and keep header-like lines out of the rest of the patch",
			strings.Join(judged, ", "), strings.Join(ours, ", "))
	}
	return nil
}

// prepare reads the file f changes (at p) and computes its new content.
func prepare(f *filePatch, p string) (*change, error) {
	name := f.name()
	c := &change{fp: f, dst: p}
	for _, h := range f.hunks {
		for _, l := range h.lines {
			switch l.op {
			case '+':
				c.add++
			case '-':
				c.del++
			}
		}
	}
	if f.creates() {
		fi, err := os.Lstat(p)
		switch {
		case err == nil && fi.IsDir():
			return nil, fmt.Errorf("%s is a directory, but the patch creates it as a file (--- /dev/null)", name)
		case err == nil:
			return nil, fmt.Errorf("%s already exists, but the patch creates it (--- /dev/null); make the patch from its current content instead", name)
		case errors.Is(err, syscall.ENOTDIR):
			return nil, fmt.Errorf("cannot create %s: a directory in its path is a file", name)
		case !errors.Is(err, fs.ErrNotExist):
			return nil, pathError(name, err)
		}
		if err := parentsPossible(name, p); err != nil {
			return nil, err
		}
		c.perm = newFilePerm
		if f.mode != 0 {
			c.perm = f.mode
		}
		var err2 error
		c.new, _, err2 = applyHunks(f, "")
		return c, err2
	}
	if f.deletes() {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s is a symbolic link; apply_patch does not delete links (use shell)", name)
		}
	}
	dst, info, err := writeTarget(name, p)
	if err != nil {
		return nil, err
	}
	if info == nil {
		return nil, fmt.Errorf("%s does not exist; a patch that creates a file has `--- /dev/null` as its old name", name)
	}
	data, err := os.ReadFile(dst)
	if err != nil {
		return nil, pathError(name, err)
	}
	c.dst, c.old, c.info, c.perm = dst, string(data), info, info.Mode()&keptMode
	c.new, c.notes, err = applyHunks(f, c.old)
	if err != nil {
		return nil, err
	}
	if f.deletes() && c.new != "" {
		return nil, fmt.Errorf("the patch deletes %s (+++ /dev/null) but does not remove all of it (%d line%s would be left); the hunk must remove every line", name, len(splitLines(c.new)), plural(len(splitLines(c.new)), "", "s"))
	}
	return c, nil
}

// noChange adds to err that the patch changed nothing.
func noChange(err error) error {
	return fmt.Errorf("%v; no file was changed", err)
}

// sameFile reports whether two changes are to one file.
func sameFile(a, b *change) bool {
	if a.info != nil && b.info != nil {
		return os.SameFile(a.info, b.info)
	}
	return filepath.Clean(a.dst) == filepath.Clean(b.dst)
}

// parentsPossible checks, without creating anything, that the directories
// above a new file p can exist: the nearest existing one is a directory.
func parentsPossible(name, p string) error {
	for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("cannot create %s: %s is a file, not a directory", name, dir)
			}
			return nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return pathError(name, err)
		}
		if filepath.Dir(dir) == dir {
			return nil
		}
	}
}

// commit writes every change, all or none: new contents are staged first,
// then renamed into place and files deleted; a failure on the way restores
// the files already changed.
func (t *ApplyPatch) commit(ctx context.Context, changes []*change) error {
	staged := make([]*staged, len(changes))
	var made []string
	discard := func() {
		for _, s := range staged {
			if s != nil {
				s.discard()
			}
		}
		removeDirs(made)
	}
	for i, c := range changes {
		if c.fp.deletes() {
			continue
		}
		dirs, err := makeParents(c.fp.name(), c.dst)
		made = append(made, dirs...)
		if err == nil {
			staged[i], err = stage(c.dst, []byte(c.new), c.perm)
			if err != nil {
				err = fmt.Errorf("cannot write %s: %v", c.fp.name(), unwrapPath(err))
			}
		}
		if err != nil {
			discard()
			return noChange(err)
		}
	}
	if err := cancelled(ctx); err != nil {
		discard()
		return err
	}
	// Writes first, then deletions: a deleted file is the costliest to
	// restore.
	order := make([]int, 0, len(changes))
	for i, c := range changes {
		if !c.fp.deletes() {
			order = append(order, i)
		}
	}
	for i, c := range changes {
		if c.fp.deletes() {
			order = append(order, i)
		}
	}
	for k, i := range order {
		c := changes[i]
		var err error
		if t.failCommit != nil {
			err = t.failCommit(i)
		}
		if err == nil {
			if c.fp.deletes() {
				err = os.Remove(c.dst)
			} else {
				err = staged[i].commit()
				staged[i] = nil
			}
		}
		if err != nil {
			rerr := restore(changes, order[:k])
			discard()
			if rerr != nil {
				return fmt.Errorf("cannot change %s (%v), and restoring the files changed before it failed too (%v): check them", c.fp.name(), unwrapPath(err), rerr)
			}
			return fmt.Errorf("cannot change %s (%v); the files changed before it were restored, so no file was changed", c.fp.name(), unwrapPath(err))
		}
	}
	return nil
}

// restore puts back the content of the changes listed in done.
func restore(changes []*change, done []int) error {
	var errs []error
	for _, i := range slices.Backward(done) {
		c := changes[i]
		if c.info == nil {
			if err := os.Remove(c.dst); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		s, err := stage(c.dst, []byte(c.old), c.perm)
		if err == nil {
			err = s.commit()
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
