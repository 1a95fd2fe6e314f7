package permission

import (
	"slices"

	"github.com/custom-agent/custom-agent/permission/pathrisk"
)

// PathsToResolve returns the absolute paths the engine will judge for req,
// in order and without duplicates: path arguments, a shell command's working
// directory and the files it touches, a patch's targets. A path written with
// ".." is returned uncleaned ("/p/link/../x"), because the kernel resolves
// the link before the ".."; the caller must resolve it physically (as
// filepath.EvalSymlinks does). The caller puts each result in req.Resolved
// under the returned key before calling Check. It is pure, like Check.
func PathsToResolve(req Request) []string {
	var j judge
	j.run(&req)
	var out []string
	seen := make(map[string]bool, len(j.paths))
	for _, p := range j.paths {
		k := p.key()
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, k)
	}
	return out
}

// TreesToScan returns the directories a shell command reads recursively
// inside the working directory (grep -r src, rg), absolute and clean, in
// order and without duplicates. The caller scans each and passes what it
// found in req.Trees, which a built-in rule needs before it may allow such
// a read. It is pure, like Check.
func TreesToScan(req Request) []string {
	var j judge
	j.run(&req)
	var out []string
	for _, p := range j.paths {
		if !p.deep || p.canon == "" || p.write || req.Cwd == "" || !pathrisk.Within(p.canon, req.Cwd) || slices.Contains(out, p.canon) {
			continue
		}
		out = append(out, p.canon)
	}
	return out
}

// ReposToScan returns the directories whose git repository a shell command
// prints the tracked content of (git diff, git log -p, git show), absolute
// and clean, in order and without duplicates. The caller reads the index of
// the repository holding each and passes what it found in req.Repos, which
// a built-in rule needs before it may allow such a command. It is pure,
// like Check.
func ReposToScan(req Request) []string {
	var j judge
	j.run(&req)
	var out []string
	for _, p := range j.paths {
		if !p.tracked || p.committed || p.canon == "" || slices.Contains(out, p.canon) {
			continue
		}
		out = append(out, p.canon)
	}
	return out
}

// GitConfigsToRead returns the directories a shell command runs git in
// (git -C applied), absolute and clean, in order and without duplicates.
// git reads the configuration of the repository holding each, which the
// repository controls and which can make even git status run a program
// (core.fsmonitor, a clean filter) or git log one (a textconv driver,
// gpg.program). The caller reads that configuration and passes what it
// found in req.GitConfigs, which a built-in rule needs before it may allow
// any git command. A directory git finds no other way than from the
// command's own options is not listed: such a call is never covered. It is
// pure, like Check.
func GitConfigsToRead(req Request) []string {
	// The shell's analysis alone says where git runs: no judgement of
	// the request is needed, and the caller's Analysis is used when it
	// fits.
	cmd, cwd, ok := shellInput(&req, pathrisk.Env{Cwd: req.Cwd, Home: req.Home, UserHomes: req.UserHomes, ConfigHome: req.ConfigHome, DataDir: req.DataDir})
	if !ok {
		return nil
	}
	j := judge{req: req}
	res, _ := j.analyzeShell(cmd, cwd)
	var out []string
	for _, d := range res.Repos {
		if d != "" {
			out = append(out, d)
		}
	}
	return out
}

// GlobsToExpand returns the glob patterns a shell command would have the
// shell expand (`cat *.txt`), absolute and clean, in order and without
// duplicates. The caller expands each against the file system, resolves
// the symbolic links of every match and passes them in req.Expanded under
// the pattern returned, so that every match is judged. It is pure, like
// Check.
func GlobsToExpand(req Request) []string {
	var j judge
	j.run(&req)
	var out []string
	for _, p := range j.paths {
		if !p.glob || p.canon == "" || !hasMeta(p.canon) || slices.Contains(out, p.canon) {
			continue
		}
		out = append(out, p.canon)
	}
	return out
}
