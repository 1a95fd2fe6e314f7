// Package permission is the PermissionEngine of spec §3: the one gate every
// tool call passes. Engine.Check takes a Request — the tool's metadata, its
// arguments, the working directory, the session's mode, the policy rules
// that apply, the session's prior approvals and the active skill's
// allowed tools — and returns a Decision: allow, ask or deny, with the risk
// it was judged at, where the decision came from, the findings that raised
// the risk, and a reason a person can read.
//
// The package is pure. It does no I/O, reads no clock and keeps no mutable
// state: symbolic links are resolved by the caller and passed in
// (Request.Resolved), so a recorded request decides the same way when it is
// replayed. There is no field for anything the model said (spec §3,
// invariant 1): the decision depends only on the call and its context.
//
// Risk analysis is delegated: shell commands to permission/shellrisk, which
// walks the syntax tree of mvdan.cc/sh; paths to permission/pathrisk.
package permission
