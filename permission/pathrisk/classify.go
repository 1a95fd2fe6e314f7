package pathrisk

import (
	"path"
	"slices"
	"strings"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// PathFacts is one path a call touches, in the forms the caller knows.
type PathFacts struct {
	// Raw is the path as written in the arguments; it names the path in the
	// reason a person reads.
	Raw string
	// Canonical is the lexical absolute form (see Canonical). Empty means
	// "compute it from Raw".
	Canonical string
	// Resolved is Canonical with symbolic links resolved by the caller.
	// Empty means the caller did not resolve it, and only Canonical counts.
	Resolved string
	// Write is set when the access creates, changes, truncates or deletes.
	Write bool
	// Recursive is set when the access reads everything beneath the path
	// (a recursive search): a directory that holds home directories or
	// credential stores is then a credential read.
	Recursive bool
	// Unknown is set when the caller knows the location cannot be known
	// statically (a shell word built at run time). Raw is then only named
	// in the explanation, never resolved, and the access is judged as
	// outside the working directory.
	Unknown bool
}

// Classify returns the risk of the access p and a clause that explains it
// ("`~/.ssh/id_rsa` is in ~/.ssh, where SSH keys live"); the clause is empty
// for a plain access inside the working directory, whose level is read or
// write. The level is the highest that either form of the path earns, so a
// symbolic link cannot hide where it points. A path that cannot be made
// absolute (unknown user, unknown home) is treated as outside the working
// directory. Classify never panics and runs in time linear in len(p.Raw).
func Classify(p PathFacts, env Env) (risk.Level, string) {
	base := risk.Read
	if p.Write {
		base = risk.Write
	}
	if len(p.Raw) > 1 && p.Raw[0] == '~' && p.Raw[1] != '/' && p.Canonical == "" {
		if _, ok := Canonical(p.Raw, env); !ok {
			// ~user with a home this engine does not know: the safe default
			// is to judge it as the credential store it may be.
			return risk.Credential, quote(p.Raw) + " is in the home of a user whose home is unknown, which may hold keys and tokens"
		}
	}
	if p.Unknown {
		return risk.Raise(base), quote(p.Raw) + " names a location known only at run time, so it is treated as outside the working directory"
	}
	canon := p.Canonical
	if canon == "" {
		c, ok := Canonical(p.Raw, env)
		if !ok {
			if len(p.Raw) > 1 && p.Raw[0] == '~' && p.Raw[1] != '/' {
				// ~user with a home this engine does not know: the safe
				// default is to judge it as the credential store it may be.
				return risk.Credential, quote(p.Raw) + " is in the home of a user whose home is unknown, which may hold keys and tokens"
			}
			return risk.Raise(base), quote(p.Raw) + " cannot be resolved to a known location, so it is treated as outside the working directory"
		}
		canon = c
	}
	level, what := locate(canon, env, p.Write)
	via := " is "
	if r := p.Resolved; r != "" && r != canon {
		if l, w := locate(r, env, p.Write); l > level {
			level, what, via = l, w, " resolves through a symbolic link or a hard link to "+quote(r)+", which is "
		}
	}
	if p.Recursive && level < risk.Credential {
		for _, f := range [...]string{canon, p.Resolved} {
			if f != "" && holdsSecrets(f, env) {
				return risk.Credential, quote(p.Raw) + " holds home directories or system secrets, and the call reads everything beneath it"
			}
		}
	}
	if level > base {
		return level, quote(p.Raw) + via + what
	}
	if HasControl(p.Raw) || HasControl(canon) {
		return risk.Raise(base), quote(strings.ToValidUTF8(p.Raw, "?")) + " holds a control character, which no real file name holds, so where it leads cannot be trusted"
	}
	outside := !Within(canon, env.Cwd) || (p.Resolved != "" && !Within(p.Resolved, env.Cwd))
	if outside {
		return risk.Raise(base), quote(p.Raw) + " is outside the working directory"
	}
	return base, ""
}

// Protected reports whether writing the path (either form) would plant code
// that runs later or change custom-agent's own rights: the locations that
// make a write at least execute regardless of the working directory. A
// policy should loosen such a write only when it names the file.
func Protected(p PathFacts, env Env) bool {
	if !p.Write || p.Unknown {
		return false
	}
	canon := p.Canonical
	if canon == "" {
		c, ok := Canonical(p.Raw, env)
		if !ok {
			return false
		}
		canon = c
	}
	if l, _ := locate(canon, env, true); l >= risk.Execute {
		return true
	}
	if p.Resolved != "" && p.Resolved != canon {
		l, _ := locate(p.Resolved, env, true)
		return l >= risk.Execute
	}
	return false
}

// IsCredential reports whether the path, in its canonical form, is a
// credential location for reading. It is meant for analysers that must know
// whether a source of data is a secret (a file piped to the network).
func IsCredential(canonical string, env Env) bool {
	l, _ := locate(canonical, env, false)
	return l >= risk.Credential
}

func quote(s string) string { return "`" + s + "`" }

// HasControl reports whether s holds a NUL or another ASCII control
// character (0x00-0x1f, 0x7f). File paths never hold them legitimately: a
// NUL ends the name for the kernel and every C program, and the others
// hide text on a terminal. Tool arguments holding them are refused before
// the engine (package tool); the engine still judges them suspicious.
func HasControl(s string) bool { return FirstControl(s) >= 0 }

// FirstControl returns the byte offset of the first control character in
// s (see HasControl), or -1.
func FirstControl(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return i
		}
	}
	return -1
}

// maxComps bounds the components kept on the stack; deeper paths are judged
// by their first maxComps components and their last one.
const maxComps = 48

// locate returns the highest level a location gives the clean absolute path
// p, and what that location is. It is Read with no words for a path that is
// nowhere in particular.
func locate(p string, env Env, write bool) (risk.Level, string) {
	lower := strings.ToLower(p)
	var buf [maxComps]string
	comps := split(lower, buf[:0])
	if len(comps) == 0 {
		return risk.Read, ""
	}
	best, what := risk.Read, ""
	consider := func(l risk.Level, w string) {
		if l > best {
			best, what = l, w
		}
	}
	if l, w := matchAt(rootLocations, comps, 0, write); l != 0 {
		consider(l, w)
	}
	var hb [8]int
	for _, off := range homeOffsets(lower, comps, env, hb[:0]) {
		if l, w := matchAt(homeLocations, comps, off, write); l != 0 {
			consider(l, w)
		}
		if l, w, _ := browserStore(comps, off); l != 0 {
			consider(l, w)
		}
	}
	if write && env.ConfigHome != "" {
		ch := strings.ToLower(env.ConfigHome)
		if withinFold(lower, ch) && len(lower) > len(ch) {
			rest := lower[len(ch)+1:]
			if rest == "custom-agent" || strings.HasPrefix(rest, "custom-agent/") {
				consider(risk.Credential, "custom-agent's own configuration; the agent must not change its own rights")
			}
		}
	}
	if inDataDir(lower, env) {
		consider(risk.Credential, dataDirWhat)
	}
	for i := range comps {
		if l, w := matchAt(anyLocations, comps, i, write); l != 0 {
			consider(l, w)
		}
	}
	if l, w, _ := submodule(comps, write); l > risk.Read {
		consider(l, w)
	}
	if write && best < risk.Execute && inGitDir(comps) >= 0 {
		consider(risk.Execute, gitDirWrite)
	}
	consider(byName(comps[len(comps)-1]))
	if write {
		consider(protectedName(comps[len(comps)-1]))
	}
	if i := strings.IndexByte(p, 0); i > 0 {
		// A NUL ends the name for every C program and the kernel: judge
		// the path they would open as well (".env\x00.txt" is ".env").
		consider(locate(p[:i], env, write))
	}
	return best, what
}

// dataDirWhat is what a path in a data directory given by the runner is,
// the words of the default one's entry in homeLocations.
const dataDirWhat = "custom-agent's own data: the event log, the outputs it keeps and the web UI's script token, which answers questions"

// InDataDir reports whether the clean absolute path p is custom-agent's
// data directory or lies in one: env.DataDir, or the default
// .local/share/custom-agent of a home the engine knows (the locations
// Classify judges credential as custom-agent's own data). A tool that
// walks a tree does not enter it: what it holds (the event log, the raw
// outputs kept, the web UI's script tokens) is read by no tool.
func InDataDir(p string, env Env) bool {
	lower := strings.ToLower(p)
	if inDataDir(lower, env) {
		return true
	}
	var buf [maxComps]string
	comps := split(lower, buf[:0])
	if len(comps) == 0 {
		return false
	}
	var hb [8]int
	for _, off := range homeOffsets(lower, comps, env, hb[:0]) {
		if len(comps) >= off+3 && comps[off] == ".local" && comps[off+1] == "share" && comps[off+2] == "custom-agent" {
			return true
		}
	}
	return false
}

// inDataDir reports whether the lower-cased clean path lower lies in
// env.DataDir (in any letter case, as the default one is matched).
func inDataDir(lower string, env Env) bool {
	d := env.DataDir
	if d == "" || d[0] != '/' || d == "/" {
		return false
	}
	return withinFold(lower, strings.ToLower(strings.TrimSuffix(d, "/")))
}

// gitDirWrite is what a write inside a git directory is, when no entry of
// the tables says more (a hook, the config): its HEAD, index, objects and
// refs decide whether git takes it for a repository at all (a broken HEAD
// makes git look further up and take a directory the model filled for one,
// with a configuration the model wrote), and an index entry may name a
// file outside the project.
const gitDirWrite = "in the git directory, which git reads for every command: its HEAD, index, objects and refs decide which repository, which configuration and which files git reads"

// inGitDir returns the offset of the first ".git" component that has
// components after it (the path is inside a git directory), or -1.
func inGitDir(comps []string) int {
	for i := 0; i+1 < len(comps); i++ {
		if comps[i] == ".git" {
			return i
		}
	}
	return -1
}

// submodule judges a path inside a submodule's git directory,
// .git/modules/NAME/…, where NAME is the submodule's name and may hold
// slashes (it defaults to the submodule's path, vendor/lib): its config
// holds the remote's tokens like .git/config, and a hook of it runs later.
// The tables cannot say "any number of components", so it is code.
// It also returns the offset of ".git", so that Sensitive can ask a rule to
// name the whole path from there.
func submodule(comps []string, write bool) (risk.Level, string, int) {
	for i := 0; i+3 < len(comps); i++ {
		if comps[i] != ".git" || comps[i+1] != "modules" {
			continue
		}
		if comps[len(comps)-1] == "config" {
			return risk.Credential, "a submodule's git configuration, which holds tokens in remote URLs and http.extraheader and can name commands git runs", i
		}
		if write {
			for _, c := range comps[i+3:] {
				if c == "hooks" {
					return risk.Execute, "a submodule's git hook, which git runs later", i
				}
			}
			if last := comps[len(comps)-1]; last == "config.worktree" || last == "attributes" {
				return risk.Execute, "a submodule's git configuration, which can name commands git runs", i
			}
		}
		return risk.Read, "", i
	}
	return risk.Read, "", -1
}

// matchAt returns the level of the first location in ix that matches comps
// from offset off, or 0.
func matchAt(ix indexed, comps []string, off int, write bool) (risk.Level, string) {
	if off >= len(comps) {
		return 0, ""
	}
	var best risk.Level
	var what string
	try := func(ls []location) {
		for _, l := range ls {
			if l.writeOnly && !write || l.level <= best {
				continue
			}
			if matches(l, comps[off:]) {
				best, what = l.level, l.what
			}
		}
	}
	try(ix.first(comps[off]))
	try(ix.wildcard)
	return best, what
}

func matches(l location, comps []string) bool {
	if len(comps) < len(l.comps) || (!l.tree && len(comps) != len(l.comps)) {
		return false
	}
	for i, c := range l.comps {
		if c != "*" && c != comps[i] {
			return false
		}
	}
	return true
}

// homeOffsets returns the component offsets at which a home directory ends
// in comps: the user's home, the homes in env.UserHomes, and the
// conventional /root, /home/NAME, /Users/NAME and /var/root. lower is the
// lower-cased path that comps split. The offsets are appended to out in
// ascending order, so the judgement does not depend on map order.
func homeOffsets(lower string, comps []string, env Env, out []int) []int {
	add := func(off int) {
		i := 0
		for i < len(out) && out[i] < off {
			i++
		}
		if i < len(out) && out[i] == off {
			return
		}
		out = append(out, 0)
		copy(out[i+1:], out[i:])
		out[i] = off
	}
	if off, ok := offsetOf(lower, env.Home); ok {
		add(off)
	}
	for _, h := range env.UserHomes {
		if off, ok := offsetOf(lower, h); ok {
			add(off)
		}
	}
	switch {
	case comps[0] == "root":
		add(1)
	case (comps[0] == "home" || comps[0] == "users") && len(comps) > 1:
		add(2)
	case comps[0] == "var" && len(comps) > 1 && comps[1] == "root":
		add(2)
	}
	return out
}

// offsetOf returns the number of components of dir when lower lies within it.
func offsetOf(lower, dir string) (int, bool) {
	if dir == "" || dir[0] != '/' || !withinFold(lower, dir) {
		return 0, false
	}
	if dir == "/" {
		return 0, true
	}
	return strings.Count(dir, "/") - boolInt(strings.HasSuffix(dir, "/")), true
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// split appends the components of a clean absolute path to buf. Past
// maxComps it keeps only the last component, so a name-based judgement
// still sees the file name.
func split(p string, buf []string) []string {
	start := -1
	last := ""
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			if start >= 0 && i > start {
				if len(buf) < maxComps-1 {
					buf = append(buf, p[start:i])
				} else {
					last = p[start:i]
				}
			}
			start = i + 1
		}
	}
	if last != "" {
		buf = append(buf, last)
	}
	return buf
}

// HoldsSecrets reports whether a recursive read of the directory dir (clean,
// absolute) reaches home directories or system secrets: the root, /home,
// /Users, /root, a home or one of its ancestors.
func HoldsSecrets(dir string, env Env) bool { return holdsSecrets(dir, env) }

// holdsSecrets reports whether the directory dir contains a home directory
// or /etc: the root, /home, /Users, /root, a home or one of its ancestors.
func holdsSecrets(dir string, env Env) bool {
	if dir == "/" || Within(env.Home, dir) {
		return true
	}
	for _, h := range env.UserHomes {
		if Within(h, dir) {
			return true
		}
	}
	lower := strings.ToLower(dir)
	var buf [4]string
	comps := split(lower, buf[:0])
	switch {
	case len(comps) == 1:
		return comps[0] == "home" || comps[0] == "users" || comps[0] == "root"
	case len(comps) == 2:
		return comps[0] == "home" || comps[0] == "users" || comps[0] == "var" && comps[1] == "root"
	}
	return false
}

// Sensitive returns the components that make the clean absolute path p a
// credential or protected location (lower case; "*" stands for any one
// component), or nil when it is neither. A policy rule names such a
// location only when its literal, wildcard-free text holds these
// components in a row: `.git/hooks` for a hook, `.ssh` for a key in
// ~/.ssh, `.env` for an environment file. For custom-agent's own policy
// and configuration it is the whole rest of the path from
// `.custom-agent` or `custom-agent` on, so that only a rule naming
// `.custom-agent/policy.json` itself lets the agent change its own rights.
func Sensitive(p string, env Env, write bool) []string {
	lower := strings.ToLower(p)
	var buf [maxComps]string
	comps := split(lower, buf[:0])
	if len(comps) == 0 {
		return nil
	}
	var best risk.Level
	var out []string
	// A result taken from comps is kept as its offset and copied on
	// return, so that buf never escapes to the heap.
	outOff := -1
	consider := func(l risk.Level, s []string) {
		if l >= risk.Execute && l > best {
			best, out, outOff = l, s, -1
		}
	}
	considerComps := func(l risk.Level, off int) {
		if l >= risk.Execute && l > best {
			best, out, outOff = l, nil, off
		}
	}
	at := func(ix indexed, off int) {
		if off >= len(comps) {
			return
		}
		try := func(ls []location) {
			for _, l := range ls {
				if l.writeOnly && !write || !matches(l, comps[off:]) {
					continue
				}
				if l.level >= risk.Credential && l.writeOnly {
					considerComps(l.level, off) // the agent's own configuration
					continue
				}
				consider(l.level, l.comps)
			}
		}
		try(ix.first(comps[off]))
		try(ix.wildcard)
	}
	at(rootLocations, 0)
	var hb [8]int
	for _, off := range homeOffsets(lower, comps, env, hb[:0]) {
		at(homeLocations, off)
		if l, _, i := browserStore(comps, off); l != 0 {
			// The database's name (History) or the profile's directory
			// (Sessions) and what is beneath it.
			considerComps(l, i)
		}
	}
	if write && env.ConfigHome != "" {
		ch := strings.ToLower(env.ConfigHome)
		if withinFold(lower, ch) && len(lower) > len(ch) {
			if rest := lower[len(ch)+1:]; rest == "custom-agent" || strings.HasPrefix(rest, "custom-agent/") {
				consider(risk.Credential, splitAll(rest))
			}
		}
	}
	if inDataDir(lower, env) {
		// Only a rule naming the data directory itself, whole, names it.
		var db [maxComps]string
		consider(risk.Credential, slices.Clone(split(strings.ToLower(path.Clean(env.DataDir)), db[:0])))
	}
	for i := range comps {
		at(anyLocations, i)
	}
	last := comps[len(comps)-1]
	if l, _, at := submodule(comps, write); l >= risk.Execute {
		considerComps(l, at)
	}
	if l, _ := byName(last); l >= risk.Credential {
		consider(l, []string{last})
	}
	if write && best < risk.Execute && inGitDir(comps) >= 0 {
		consider(risk.Execute, []string{".git"})
	}
	if outOff >= 0 {
		return slices.Clone(comps[outOff:])
	}
	if out == nil {
		if l, _ := locate(p, env, write); l >= risk.Execute {
			return []string{last}
		}
	}
	return out
}
