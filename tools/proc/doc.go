// Package proc holds the built-in tools that run processes: shell,
// run_tests and get_diagnostics.
//
// Every process runs through one function (see process.go): in its own
// process group, with stdin from /dev/null, with exactly the environment of
// the call (tool.Call.Env, which the executor has scrubbed of secrets; nil
// means an empty environment, so a caller that wants PATH must pass it), and
// with stdout and stderr streamed to the call's Output as they are produced,
// never gathered in memory. When the context is cancelled or the timeout
// passes, the whole group — grandchildren included — gets SIGTERM and, after
// a grace of two seconds, SIGKILL. When the command's main process exits,
// whatever it left running in its group is killed too: no process outlives
// its call.
//
// The tools never ask for permission: the executor has asked the
// PermissionEngine before it calls Run.
package proc
