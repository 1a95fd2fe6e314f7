// Package pathrisk judges the risk of touching one file system path. It is
// pure: it never touches the file system, and the caller passes in both the
// lexical (canonical) form of a path and the form with symbolic links
// resolved, so that a recorded request can be judged again during replay.
//
// A path is judged by both forms, so a link inside the repository pointing at
// ~/.ssh is judged as ~/.ssh. Locations are compared by whole path
// components, never string prefixes, and without regard to ASCII case,
// because macOS and Windows file systems ignore case and `~/.SSH` is then
// the same directory as `~/.ssh`. Being stricter than Linux needs is the
// price of one rule for every system.
//
// Levels:
//   - Credential locations (secrets, keys, cookie stores, /etc, /proc/*/environ,
//     .env files) are credential for reads and writes.
//   - Writes to files that later run code (git hooks, shell rc files,
//     autostart, cron, editor and agent configs) are at least execute.
//   - Writes to custom-agent's own policy, config and data are credential:
//     the agent must not raise its own rights.
//   - Any other path outside the working directory raises the access one
//     level (a read becomes write, a write becomes execute; spec §3 step 2).
//
// Every .env file is credential, including .env.example, .env.sample and
// .env.template: their names promise no secrets, but nothing enforces it and
// copies of real files are routinely committed under those names. A user who
// wants them read freely says so with an allow rule on their path.
package pathrisk
