package permission

import (
	"bytes"
	"encoding/json"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// Request is everything a decision depends on. It is a value: the engine
// reads it and never changes it, and the same Request always yields the same
// Decision. There is deliberately no field for anything the model said.
type Request struct {
	// Tool is the metadata of the tool called, from the router.
	Tool ToolInfo `json:"tool"`
	// Args are the call's arguments as decoded from JSON (strings, float64,
	// bool, nil, []any, map[string]any).
	Args map[string]any `json:"args"`
	// Cwd is the session's working directory, absolute and clean. Home is
	// $HOME. Both may be empty when unknown, which makes paths relying on
	// them unknown (and so judged as outside the working directory).
	Cwd  string `json:"cwd"`
	Home string `json:"home,omitempty"`
	// ConfigHome is $XDG_CONFIG_HOME when it is set.
	ConfigHome string `json:"configHome,omitempty"`
	// DataDir is custom-agent's data directory as the runner resolved it
	// (--data-dir, $CUSTOM_AGENT_DATA_DIR, $XDG_DATA_HOME), absolute, with
	// its symbolic links resolved. It holds the event log and serve's
	// script token, so every path in it is a credential location, like
	// the default ~/.local/share/custom-agent. "" means the default.
	DataDir string `json:"dataDir,omitempty"`
	// UserHomes maps user names to home directories, for ~user paths.
	UserHomes map[string]string `json:"userHomes,omitempty"`
	// Resolved maps an absolute path to the same path with symbolic links
	// resolved. The caller fills it for every path PathsToResolve returns
	// (entries for parent directories work too: the engine walks a path's
	// components through the map the way the kernel walks links, so
	// "link/../x" is judged where it really leads). A path with no entry
	// for it or its parents is judged by its canonical form only.
	Resolved map[string]string `json:"resolved,omitempty"`
	// Expanded maps a glob pattern GlobsToExpand returned to the files it
	// matches now, each with its symbolic links resolved, so that `cat
	// *.txt` is judged by where every match really leads (notes.txt may be
	// a link to a key). A list that ends with "" was cut short: the rest of
	// the matches are unknown and the call cannot be allowed by a rule. A
	// pattern with no entry is judged by the pattern alone.
	Expanded map[string][]string `json:"expanded,omitempty"`
	// Trees maps a directory TreesToScan returned to what the caller found
	// beneath it. A recursive read (grep -r, rg) is covered by a built-in
	// rule only when its tree was scanned whole and holds no credential
	// file and no symbolic link; a directory with no entry was not scanned.
	Trees map[string]Tree `json:"trees,omitempty"`
	// Repos maps a directory ReposToScan returned to what the caller found
	// in the git repository holding it. A command that prints what the
	// repository tracks (git diff, git log -p, git show) is covered by a
	// built-in rule only when the repository's index was read whole and
	// tracks no credential file; a directory with no entry was not read.
	Repos map[string]Repo `json:"repos,omitempty"`
	// GitConfigs maps a directory GitConfigsToRead returned to what the
	// caller found in the configuration of the git repository holding it
	// (the repository's own config files, its submodules' included): ""
	// when it sets nothing with which git runs a program or reads outside
	// the repository, else a clause saying what it found, which the reason
	// gives after "in the repository git runs in," ("its own configuration
	// sets core.fsmonitor, …", "its configuration could not be read
	// whole …"). A git command is covered by a built-in rule only when
	// the configuration of every repository it runs in was read and is
	// clean; a directory with no entry was not read. A directory in no
	// repository is clean: git there reads no repository's configuration.
	GitConfigs map[string]string `json:"gitConfigs,omitempty"`
	// Mode is the session's mode; "" means ModeDefault.
	Mode Mode `json:"mode,omitempty"`
	// Policy holds the rules that apply, compiled; nil means no rules.
	Policy *Policy `json:"policy,omitempty"`
	// History holds the calls the user approved earlier in this session.
	History []Prior `json:"history,omitempty"`
	// AllowedTools is the active skill's allowed_tools: nil means no skill
	// is active; non-nil (even empty) means only these tools may run. Each
	// entry is a tool name or a glob over tool names.
	AllowedTools []string `json:"allowedTools,omitempty"`
	// Analysis is Analyze(req), computed once so that PathsToResolve,
	// GlobsToExpand, TreesToScan and Check share one parse of the shell
	// command. nil means none; one computed from other arguments than
	// these is ignored, so it never changes a decision. It is not part of
	// the recorded request: a replay analyses again.
	Analysis *Analysis `json:"-"`
	// Sandbox says whether the processes of an allowed call can be
	// confined here; nil means the caller runs none in a sandbox (a
	// check from a hook, a test), and changes nothing.
	Sandbox *SandboxFacts `json:"sandbox,omitempty"`
	// Taint, when set, says that a tool result earlier in the session
	// held text the injection scanner flagged and is still in the model's
	// context: then nothing above read is allowed without a person. The
	// caller fills it from the session's recorded events (the first
	// flagged one); nil means none was.
	Taint *Taint `json:"taint,omitempty"`
}

// Taint names the recorded tool result that tainted the session.
type Taint struct {
	// Seq is the seq of the tool.completed (or tool.failed) event whose
	// output was flagged.
	Seq        uint64 `json:"seq"`
	ToolCallID string `json:"toolCallId,omitempty"`
	// Classes are the scanner's classes found in it.
	Classes []string `json:"classes,omitempty"`
	// Unscanned says the result could not be scanned at all (a hook's
	// after event too large to read whole, or not scanned within the
	// hook's deadline): it may hold such text.
	Unscanned bool `json:"unscanned,omitempty"`
}

// Prior is a decision made earlier in the session.
type Prior struct {
	Tool string `json:"tool"`
	// Args is CanonicalArgs of the call's arguments.
	Args json.RawMessage `json:"args"`
	// Risk is the risk the call was judged at then.
	Risk risk.Level `json:"risk"`
	// Decision is the final decision; only allow counts.
	Decision Verdict `json:"decision"`
	// ByUser is set when a person made the decision (actor "user"), not a
	// rule or the system.
	ByUser bool `json:"byUser"`
}

// CanonicalArgs encodes args in the canonical form Prior.Args holds: JSON
// with object keys sorted and no HTML escaping, so that two calls are the
// same exactly when their encodings are byte-identical.
func CanonicalArgs(args map[string]any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if args == nil {
		args = map[string]any{}
	}
	if err := enc.Encode(args); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Repo is what a caller found in the git repository holding a directory
// ReposToScan returned.
type Repo struct {
	// Checked is set when the repository's index was read whole (or the
	// directory is in no repository, which then tracks nothing).
	Checked bool `json:"checked"`
	// Secret names the first file the index tracks, anywhere in the
	// repository, that the engine judges a credential ("" when none).
	Secret string `json:"secret,omitempty"`
	// Why, when Checked is false, may say what kept the caller from
	// judging what git would print ("" when it does not say).
	Why string `json:"why,omitempty"`
}

// Tree is what a caller found in a directory tree it scanned for
// TreesToScan: the facts a recursive read depends on, which the command
// does not show.
type Tree struct {
	// Complete is set when every entry beneath was looked at; a scan that
	// hit its bound or an unreadable directory leaves it false.
	Complete bool `json:"complete"`
	// Secret names the first file beneath, outside any .git directory,
	// that the engine judges a credential ("" when none).
	Secret string `json:"secret,omitempty"`
	// GitSecret is the same inside a .git directory (.git/config may hold
	// tokens): grep -r reads it, rg and git grep do not.
	GitSecret string `json:"gitSecret,omitempty"`
	// Link names the first symbolic link beneath ("" when none): grep -R
	// and rg -L follow links out of the tree.
	Link string `json:"link,omitempty"`
	// Unignore names the first ignore file (.ignore, .rgignore,
	// .gitignore, .git/info/exclude) beneath the directory or in one of
	// the directories above it that negates a pattern ("!.git"): rg then
	// searches what it would skip, .git included ("" when none).
	Unignore string `json:"unignore,omitempty"`
}

// SandboxFacts are what the engine knows of the sandbox, gathered at the
// edge: it was turned off on purpose, or it cannot be enforced here, and
// why.
type SandboxFacts struct {
	// Off is set when the person turned the sandbox off (--sandbox off).
	Off bool `json:"off,omitempty"`
	// Unavailable says why no profile can be enforced for this call
	// ("no user namespaces"); "" when one can.
	Unavailable string `json:"unavailable,omitempty"`
	// WritesUnavailable says why only the read-only profile can be
	// enforced here (a protected path that is a symbolic link, a home as
	// the working directory): a call that only reads runs confined, any
	// other is asked.
	WritesUnavailable string `json:"writesUnavailable,omitempty"`
}

// Enforced reports whether the sandbox will confine a call that only
// reads: it is on and can be enforced here. A nil SandboxFacts (no
// sandbox) is not.
func (f *SandboxFacts) Enforced() bool {
	return f != nil && !f.Off && f.Unavailable == ""
}
