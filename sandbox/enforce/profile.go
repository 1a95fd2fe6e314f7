package enforce

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"time"
)

// Kind names a profile.
type Kind string

const (
	// ReadOnly is the profile of a call allowed as a read: it reads
	// anything but the hidden secrets, writes nothing but a private /tmp,
	// and has no network.
	ReadOnly Kind = "read-only"
	// Workspace is the profile of any other allowed call: it writes the
	// working directory (protected paths excepted), a private /tmp and the
	// caches that hold no credentials, and reaches the network only when
	// the call was judged network.
	Workspace Kind = "workspace"
)

// Valid reports whether k names a profile.
func (k Kind) Valid() bool { return k == ReadOnly || k == Workspace }

// Profile is what a confined process may do: the contract the kernel
// enforces. Every path is absolute and clean, with symbolic links
// resolved. The zero Profile is not valid; Plan makes them.
type Profile struct {
	Kind Kind `json:"kind"`
	// Cwd is the directory the process starts in.
	Cwd string `json:"cwd"`
	// Writable are the directories the process may write (workspace:
	// the working directory and the caches). Empty for read-only.
	Writable []string `json:"writable,omitempty"`
	// Caches are build caches the process reads and fills through a
	// private overlay layer: nothing it writes there reaches the host.
	Caches []string `json:"caches,omitempty"`
	// Protected are paths inside Writable that stay read-only: hooks,
	// git configuration, editor and agent configuration (pathrisk's
	// protected locations).
	Protected []string `json:"protected,omitempty"`
	// Pinned are the directories between the working directory and each
	// protected path (workspace): mount points of their own, so that
	// they cannot be renamed aside.
	Pinned []string `json:"pinned,omitempty"`
	// Absent are protected paths of the working directory that did not
	// exist when the call started (workspace): no mount can guard them,
	// so whatever the process creates there is removed when it ends
	// (Confined.Done), and the call fails saying so.
	Absent []string `json:"absent,omitempty"`
	// AbsentKeep are the entries, in another letter case than an absent
	// path's (.Claude for .claude), that existed when the call started:
	// the removal leaves them.
	AbsentKeep []string `json:"absentKeep,omitempty"`
	// GuardDirs are the directories of the working directory, as the
	// plan found them (workspace), in each of which a protected name made
	// during the call (.npmrc, .yarnrc, conftest.py, x.code-workspace …:
	// what a tool run there reads) is removed when it ends. Which names
	// are protected is the caller's judgement (Confine's guarded).
	GuardDirs []string `json:"guardDirs,omitempty"`
	// GuardPaths are protected paths of several components (lower case,
	// relative: .cargo/config.toml, .github/workflows …) removed below
	// each of GuardDirs as well when the call made them.
	GuardPaths []string `json:"guardPaths,omitempty"`
	// GuardKeep are the entries of protected names, and of the first
	// components of GuardPaths, that were in them when the call started:
	// the removal leaves them.
	GuardKeep []string `json:"guardKeep,omitempty"`
	// GuardLinks are the entries of GuardKeep that were links when the
	// call started, with their targets: one kept by name that is a link
	// after the call, and was not one to the same target, is removed.
	GuardLinks map[string]string `json:"guardLinks,omitempty"`
	// GitDirs are the git directories the plan found in the working
	// directory (workspace): after the call, a git directory not among
	// them is put aside if it could run code (checkGit).
	GitDirs []string `json:"gitDirs,omitempty"`
	// GitHeads are their HEAD files' contents, put back if the process
	// removes one (which makes git look elsewhere for the repository).
	GitHeads map[string]string `json:"gitHeads,omitempty"`
	// CwdGit and CwdHead say whether the working directory itself was a
	// git directory, and had a HEAD, when the call started.
	CwdGit  bool `json:"cwdGit,omitempty"`
	CwdHead bool `json:"cwdHead,omitempty"`
	// GitSubs are the submodule and worktree git directories (modules/*,
	// worktrees/*) the known ones held: a new one is vetted after the call.
	GitSubs []string `json:"gitSubs,omitempty"`
	// GitIndexes are the known git directories' index stamps: when one
	// changed, the check after the call looks in node_modules too.
	GitIndexes map[string]string `json:"gitIndexes,omitempty"`

	knownSub map[string]bool // GitSubs as a set, made by checkGit
	started  time.Time       // when Confine was called, for checkGit
	// Hidden are secrets whose content is replaced by an empty,
	// unreadable mask: credential files and directories, custom-agent's
	// own data and configuration, and files that are hard links to them.
	Hidden []string `json:"hidden,omitempty"`
	// Keep are directories under a directory the sandbox replaces (/tmp,
	// /run …) that stay visible, read-only: programs on PATH there.
	Keep []string `json:"keep,omitempty"`
	// Network is set when the process may reach the network. Otherwise it
	// runs in an empty network namespace.
	Network bool `json:"network"`
}

// Digest is the SHA-256 of the profile's canonical JSON, "sha256:…": two
// profiles with the same digest enforce the same thing.
func (p Profile) Digest() string {
	c := p
	for _, s := range []*[]string{&c.Writable, &c.Caches, &c.Protected, &c.Pinned, &c.Absent, &c.AbsentKeep, &c.GuardDirs, &c.GuardPaths, &c.GuardKeep, &c.GitDirs, &c.Hidden, &c.Keep} {
		*s = slices.Clone(*s)
		slices.Sort(*s)
		*s = slices.Compact(*s)
	}
	b, _ := json.Marshal(c)
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// As returns the profile of kind, with the network or not, planned from p,
// a workspace profile: read-only keeps its hidden secrets and drops what
// it may write.
func (p Profile) As(kind Kind, network bool) Profile {
	q := p
	q.Kind, q.Network = kind, network
	if kind == ReadOnly {
		q.Writable, q.Caches, q.Protected, q.Pinned, q.Absent, q.AbsentKeep, q.GitDirs, q.GitHeads, q.GitSubs, q.GitIndexes, q.Network = nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, false
		q.GuardDirs, q.GuardPaths, q.GuardKeep, q.GuardLinks = nil, nil, nil, nil
	}
	return q
}
