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
// Secret files are judged by what they are, wherever they sit (names.go):
// keys and key stores by extension (.pem, .key, .p12, .jks, …), SSH private
// keys by name (id_*, not .pub), registry and tool credential files
// (.npmrc, .pypirc, .netrc, .git-credentials, .dockercfg, kubeconfigs,
// Terraform state, service-account JSON, …) and .git/config, whose remote
// URLs and http.extraheader hold tokens. They are credential inside the
// project too.
//
// A .env file is credential, except the templates .env.example,
// .env.sample, .env.template and .env.dist: by convention they hold no
// secrets and are committed for everyone to copy, so they are read and
// written like any file. A NUL ends a name for the kernel and every C
// program, so a path is judged as cut at its first NUL too, and a path
// holding any control character is raised one level (the tool router
// refuses such arguments before the engine sees them).
//
// Writes to files that a harmless-looking command runs later are at least
// execute: package.json (npm scripts), Python .pth files, site-packages and
// virtualenvs, other agents' MCP and permission configurations (.roo,
// .kiro, .opencode, .cline, .cursor, .claude, .continue, .windsurf, …), and
// the configurations of checkers and test runners that load code
// (eslint.config.*, prettier.config.*, jest.config.*, tsconfig.json,
// pyproject.toml, setup.py, conftest.py, …). A Makefile is not: it is the
// build itself, which any edit of the sources changes too, and running it
// is judged as running code already.
package pathrisk
