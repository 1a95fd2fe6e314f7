// Package shellrisk judges a shell command before it runs: which programs it
// would run, which files it would read, write or delete, and how risky that
// is on the scale of package risk.
//
// Analyze parses the command with mvdan.cc/sh/v3/syntax (bash) and walks the
// syntax tree, never the raw string. It sees every simple command in lists,
// pipelines, background jobs, subshells, groups, functions, if/for/while/case,
// command and process substitution and arithmetic; it re-parses the code
// handed to shells (bash -c, eval, sh <<EOF, echo ... | sh) up to a fixed
// depth; it sees through wrappers (sudo, env, timeout, nice, xargs, find
// -exec, git -C, ...), quote removal, ANSI-C quoting, brace expansion and
// $IFS splitting; and it applies per-program rules (rm, git, find, sed, awk,
// tar, rsync, dd, SQL clients, kubectl, terraform, docker, cloud CLIs,
// network tools, package managers, interpreters).
//
// # Contract
//
//   - Analyze is pure: no I/O, no clock, no mutable global state. What it
//     knows of the world comes in Env. The same command and Env always give
//     the same Result. It is safe for concurrent use.
//   - It never panics, and its work is bounded for any input: commands longer
//     than MaxInput, re-parsing deeper than a fixed depth, too many simple
//     commands and brace expansions that produce too many words all stop the
//     analysis of that part and make the Result Opaque.
//   - Result.Risk is the maximum of the findings and at least risk.Execute,
//     the base risk of running a shell command at all.
//   - Result.Commands lists every simple command that would run, so that a
//     policy rule allowing a command prefix can be required to match all of
//     them. Transparent wrappers (env, timeout, nice, xargs, ...) are seen
//     through and not listed; wrappers with an effect of their own (sudo,
//     chroot, find, flock, ...) are listed as well as what they run.
//   - Result.Accesses lists the files read, written and deleted, resolved
//     against the working directory as cd and pushd move it (each cd is
//     assumed to succeed; a cd inside a branch that may not run makes the
//     directory unknown afterwards). Judging where they point (credential,
//     protected, outside the working directory) is left to the caller, with
//     one exception: a command that both reads a credential location and
//     talks to the network is judged credential here, since the secret can
//     leave by a pipe, a file, an argument or the environment.
//
// # Credential locations
//
// There is one list for the whole engine: pathrisk's. With Env.IsCredential
// nil, Analyze applies pathrisk.IsCredential with Env's Home and UserHomes;
// a caller with another list injects it there. Glob patterns are
// always checked against that table (pathrisk.GlobMayMatchCredential), since
// a predicate on one path cannot say what a pattern might match.
//
// # Opaque
//
// Result.Opaque means that what the command does cannot be decided without
// running it: it does not parse, a program name or shell code is built at
// run time ($cmd, $(...), eval "$x", sh -c "$x"), code is handed inline to an
// interpreter (python -c, node -e, perl -e, awk programs that run commands),
// code arrives through a pipe (curl ... | sh, base64 -d | bash), a file is
// sourced into the shell, or a limit was hit. An Opaque command has Risk at
// least execute and must never be allowed by an allow rule: only a person can
// approve it.
package shellrisk
