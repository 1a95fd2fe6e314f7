package pathrisk

import (
	"slices"
	"strings"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// A location is a place in the file system with a risk of its own. Its
// components are lower case; "*" matches any one component. A location that
// is a directory (tree) covers everything beneath it as well.
type location struct {
	comps     []string
	tree      bool
	level     risk.Level
	writeOnly bool   // judged only when the access writes
	what      string // completes "`path` is …"
}

func loc(p string, tree bool, l risk.Level, writeOnly bool, what string) location {
	return location{comps: splitAll(p), tree: tree, level: l, writeOnly: writeOnly, what: what}
}

// splitAll splits a slash-separated relative pattern; used only to build the
// tables below.
func splitAll(p string) []string {
	out := make([]string, 0, strings.Count(p, "/")+1)
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			if i > start {
				out = append(out, p[start:i])
			}
			start = i + 1
		}
	}
	return out
}

const (
	cred    = risk.Credential
	execute = risk.Execute
)

// sourceRootLocations are the locations anchored at / (rootLocations).
func sourceRootLocations() []location {
	return []location{
		loc("etc", true, cred, false, "under /etc, which holds system secrets and configuration"),
		loc("proc/*/environ", false, cred, false, "a process environment, which holds its secrets"),
		loc("proc/*/task/*/environ", false, cred, false, "a thread's environment, which is its process's and holds its secrets"),
		loc("proc/*/root", true, cred, false, "a process's view of the root directory, which reaches /etc and every home"),
		loc("proc/*/cwd", true, cred, false, "a process's working directory, which may be anywhere"),
		loc("proc/*/task/*/mem", false, cred, false, "a process's memory"),
		loc("proc/*/mem", false, cred, false, "a process's memory"),
		loc("proc/*/cmdline", false, cred, false, "a process's command line, which may hold secrets"),
		loc("run/secrets", true, cred, false, "a container secret store"),
		loc("var/run/secrets", true, cred, false, "a container or Kubernetes secret store"),
		loc("var/spool/cron", true, execute, true, "a cron table, which runs commands later"),
		loc("library/keychains", true, cred, false, "a keychain"),
		loc("library/launchagents", true, execute, true, "a launchd agent, which runs at login"),
		loc("library/launchdaemons", true, execute, true, "a launchd daemon, which runs at boot"),
	}
}

// sourceHomeLocations are the locations anchored at a home directory
// (homeLocations): the user's, any user's in Env.UserHomes, and /root,
// /home/*, /Users/*.
func sourceHomeLocations() []location {
	return []location{
		loc(".ssh", true, cred, false, "in ~/.ssh, where SSH keys live"),
		loc(".aws", true, cred, false, "in ~/.aws, where AWS credentials live"),
		loc(".config/gcloud", true, cred, false, "in ~/.config/gcloud, where Google Cloud credentials live"),
		loc(".azure", true, cred, false, "in ~/.azure, where Azure credentials live"),
		loc(".kube", true, cred, false, "in ~/.kube, where Kubernetes credentials live"),
		loc(".docker/config.json", false, cred, false, "the Docker credential file"),
		loc(".netrc", false, cred, false, "~/.netrc, which holds passwords"),
		loc(".npmrc", false, cred, false, "~/.npmrc, which holds registry tokens"),
		loc(".yarnrc.yml", false, cred, false, "~/.yarnrc.yml, which holds registry tokens"),
		loc(".pypirc", false, cred, false, "~/.pypirc, which holds registry passwords"),
		loc(".gem/credentials", false, cred, false, "the RubyGems credential file"),
		loc(".cargo/credentials", false, cred, false, "the Cargo credential file"),
		loc(".cargo/credentials.toml", false, cred, false, "the Cargo credential file"),
		loc(".git-credentials", false, cred, false, "~/.git-credentials, which holds passwords"),
		loc(".config/git/credentials", false, cred, false, "the git credential store"),
		loc(".config/gh", true, cred, false, "in ~/.config/gh, where GitHub CLI tokens live"),
		loc(".config/hub", false, cred, false, "the hub token file"),
		loc(".gnupg", true, cred, false, "in ~/.gnupg, where GPG keys live"),
		loc(".password-store", true, cred, false, "a pass password store"),
		loc(".vault-token", false, cred, false, "a Vault token"),
		loc(".terraform.d/credentials.tfrc.json", false, cred, false, "the Terraform credential file"),
		loc(".config/rclone", true, cred, false, "in ~/.config/rclone, where rclone keeps its remotes' tokens and passwords"),
		loc(".m2/settings.xml", false, cred, false, "the Maven settings file, which holds repository passwords"),
		loc(".m2/settings-security.xml", false, cred, false, "the Maven master password file"),
		loc(".gradle/gradle.properties", false, cred, false, "the Gradle properties file, which holds repository and signing credentials"),
		loc(".s3cfg", false, cred, false, "~/.s3cfg, which holds S3 access keys"),
		loc(".boto", false, cred, false, "~/.boto, which holds cloud storage keys"),
		loc(".config/op", true, cred, false, "in ~/.config/op, where the 1Password CLI keeps its sessions"),
		loc(".pgpass", false, cred, false, "~/.pgpass, which holds database passwords"),
		loc(".my.cnf", false, cred, false, "~/.my.cnf, which holds database passwords"),
		loc(".claude/.credentials.json", false, cred, false, "the Claude Code credential file"),
		loc(".codex/auth.json", false, cred, false, "the Codex CLI credential file"),
		loc(".gemini/oauth_creds.json", false, cred, false, "the Gemini CLI credential file"),
		loc(".config/github-copilot", true, cred, false, "in ~/.config/github-copilot, where Copilot tokens live"),
		loc(".config/containers/auth.json", false, cred, false, "the container registry credential file"),
		loc(".composer/auth.json", false, cred, false, "the Composer credential file"),
		loc(".config/composer/auth.json", false, cred, false, "the Composer credential file"),
		loc(".ivy2/.credentials", false, cred, false, "the Ivy/sbt credential file"),
		loc(".terraformrc", false, cred, false, "the Terraform CLI configuration, which holds tokens"),
		loc(".cache/huggingface/token", false, cred, false, "the Hugging Face token"),
		loc(".huggingface/token", false, cred, false, "the Hugging Face token"),
		loc(".bash_history", false, cred, false, "a shell history, where typed secrets remain"),
		loc(".local/share/fish/fish_history", false, cred, false, "a shell history, where typed secrets remain"),
		loc(".config/fish/fish_history", false, cred, false, "a shell history, where typed secrets remain"),
		loc(".psql_history", false, cred, false, "a psql history, where typed passwords remain"),
		loc(".mysql_history", false, cred, false, "a MySQL history, where typed passwords remain"),
		loc(".python_history", false, cred, false, "a Python history, where typed secrets remain"),
		loc(".node_repl_history", false, cred, false, "a Node.js history, where typed secrets remain"),
		loc(".config/sops", true, cred, false, "in ~/.config/sops, where sops keeps its age keys"),
		loc(".config/age", true, cred, false, "in ~/.config/age, where age keys live"),
		loc(".minikube", true, cred, false, "in ~/.minikube, where cluster client keys live"),
		loc(".local/share/containers/auth.json", false, cred, false, "the container registry credential file"),
		loc(".dockercfg", false, cred, false, "the old Docker credential file"),
		loc(".config/doctl", true, cred, false, "in ~/.config/doctl, where DigitalOcean tokens live"),
		loc(".config/hcloud", true, cred, false, "in ~/.config/hcloud, where Hetzner Cloud tokens live"),
		loc(".pulumi/credentials.json", false, cred, false, "the Pulumi credential file"),
		loc(".fly", true, cred, false, "in ~/.fly, where Fly.io tokens live"),
		loc(".config/configstore", true, cred, false, "in ~/.config/configstore, where CLI tools (firebase) keep tokens"),
		loc(".config/huggingface/token", false, cred, false, "the Hugging Face token"),
		loc(".vercel", true, cred, false, "in ~/.vercel, where Vercel tokens live"),
		loc(".netlify", true, cred, false, "in ~/.netlify, where Netlify tokens live"),
		loc(".config/netlify", true, cred, false, "in ~/.config/netlify, where Netlify tokens live"),
		loc(".ngrok2", true, cred, false, "in ~/.ngrok2, where the ngrok token lives"),
		loc(".config/ngrok", true, cred, false, "in ~/.config/ngrok, where the ngrok token lives"),
		loc(".config/stripe", true, cred, false, "in ~/.config/stripe, where Stripe keys live"),
		loc(".wakatime.cfg", false, cred, false, "the WakaTime configuration, which holds its API key"),
		loc(".nuget/nuget/nuget.config", false, cred, false, "the NuGet configuration, which holds feed passwords"),
		loc(".oci", true, cred, false, "in ~/.oci, where Oracle Cloud keys live"),
		loc(".zsh_history", false, cred, false, "a shell history, where typed secrets remain"),
		// The other names shells, REPLs and editors keep their histories
		// under, and other agents' transcripts, which hold what their tools
		// printed (an earlier `cat .env`) and what was typed.
		loc(".zhistory", false, cred, false, "a shell history, where typed secrets remain"),
		loc(".histfile", false, cred, false, "a shell history, where typed secrets remain"),
		loc(".sh_history", false, cred, false, "a shell history, where typed secrets remain"),
		loc(".zsh_sessions", true, cred, false, "zsh's per-session histories, where typed secrets remain"),
		loc(".config/zsh/.zsh_history", false, cred, false, "a shell history, where typed secrets remain"),
		loc(".local/share/zsh/history", false, cred, false, "a shell history, where typed secrets remain"),
		loc(".local/state/zsh/history", false, cred, false, "a shell history, where typed secrets remain"),
		loc(".ipython/*/history.sqlite", false, cred, false, "an IPython history, where typed secrets remain"),
		loc(".sqlite_history", false, cred, false, "an SQLite shell history, where typed secrets remain"),
		loc(".rediscli_history", false, cred, false, "a redis-cli history, where typed passwords remain"),
		loc(".irb_history", false, cred, false, "an irb history, where typed secrets remain"),
		loc(".pry_history", false, cred, false, "a pry history, where typed secrets remain"),
		loc(".dbshell", false, cred, false, "a mongo shell history, where typed passwords remain"),
		loc(".mongodb/mongosh/mongosh_repl_history", false, cred, false, "a mongosh history, where typed passwords remain"),
		loc(".viminfo", false, cred, false, "vim's history of commands, searches and registers, where typed and yanked secrets remain"),
		loc(".local/state/nvim/shada", true, cred, false, "Neovim's history of commands, searches and registers, where typed and yanked secrets remain"),
		loc(".local/share/nvim/shada", true, cred, false, "Neovim's history of commands, searches and registers, where typed and yanked secrets remain"),
		loc(".lesshst", false, cred, false, "less's history of searches, where typed secrets remain"),
		loc(".local/state/lesshst", false, cred, false, "less's history of searches, where typed secrets remain"),
		loc(".claude/projects", true, cred, false, "Claude Code's transcripts, which hold what its tools read and printed"),
		loc(".claude/history.jsonl", false, cred, false, "Claude Code's prompt history, where typed secrets remain"),
		loc(".claude/shell-snapshots", true, cred, false, "Claude Code's shell snapshots, which hold a shell's functions and settings"),
		loc(".codex/sessions", true, cred, false, "Codex CLI's transcripts, which hold what its tools read and printed"),
		loc(".codex/archived_sessions", true, cred, false, "Codex CLI's transcripts, which hold what its tools read and printed"),
		loc(".codex/history.jsonl", false, cred, false, "Codex CLI's prompt history, where typed secrets remain"),
		loc(".gemini/tmp", true, cred, false, "Gemini CLI's chat logs and checkpoints, which hold what its tools read and printed"),
		loc(".local/share/opencode", true, cred, false, "opencode's sessions and credentials"),
		loc(".config/code/user/globalstorage/state.vscdb", false, cred, false, "VS Code's state database, which holds extensions' tokens and chat history"),
		loc(".config/code/user/globalstorage/state.vscdb.backup", false, cred, false, "VS Code's state database, which holds extensions' tokens and chat history"),
		loc(".config/cursor/user/globalstorage/state.vscdb", false, cred, false, "Cursor's state database, which holds its tokens and chat history"),
		loc(".config/cursor/user/globalstorage/state.vscdb.backup", false, cred, false, "Cursor's state database, which holds its tokens and chat history"),
		loc("library/application support/code/user/globalstorage/state.vscdb", false, cred, false, "VS Code's state database, which holds extensions' tokens and chat history"),
		loc("library/application support/cursor/user/globalstorage/state.vscdb", false, cred, false, "Cursor's state database, which holds its tokens and chat history"),
		loc(".mozilla", true, cred, false, "a Firefox profile, with cookies and saved passwords"),
		loc(".config/google-chrome", true, cred, false, "a Chrome profile, with cookies and saved passwords"),
		loc(".config/chromium", true, cred, false, "a Chromium profile, with cookies and saved passwords"),
		loc(".config/bravesoftware", true, cred, false, "a Brave profile, with cookies and saved passwords"),
		loc(".config/microsoft-edge", true, cred, false, "an Edge profile, with cookies and saved passwords"),
		// Other browsers, their beta and development channels, and the
		// browsers of snap and flatpak (finding 2 of the web review: a
		// sandboxed tool read serve's token from a snap Chromium's history).
		loc(".config/microsoft-edge-beta", true, cred, false, "an Edge profile, with cookies and saved passwords"),
		loc(".config/microsoft-edge-dev", true, cred, false, "an Edge profile, with cookies and saved passwords"),
		loc(".config/google-chrome-beta", true, cred, false, "a Chrome profile, with cookies and saved passwords"),
		loc(".config/google-chrome-unstable", true, cred, false, "a Chrome profile, with cookies and saved passwords"),
		loc(".config/google-chrome-for-testing", true, cred, false, "a Chrome profile, with cookies and saved passwords"),
		loc(".config/chromium-beta", true, cred, false, "a Chromium profile, with cookies and saved passwords"),
		loc(".config/chromium-dev", true, cred, false, "a Chromium profile, with cookies and saved passwords"),
		loc(".config/vivaldi", true, cred, false, "a Vivaldi profile, with cookies and saved passwords"),
		loc(".config/vivaldi-snapshot", true, cred, false, "a Vivaldi profile, with cookies and saved passwords"),
		loc(".config/opera", true, cred, false, "an Opera profile, with cookies and saved passwords"),
		loc(".config/opera-beta", true, cred, false, "an Opera profile, with cookies and saved passwords"),
		loc(".config/opera-developer", true, cred, false, "an Opera profile, with cookies and saved passwords"),
		loc(".config/epiphany", true, cred, false, "an Epiphany (GNOME Web) profile, with cookies and saved passwords"),
		loc(".local/share/epiphany", true, cred, false, "an Epiphany (GNOME Web) profile, with cookies and saved passwords"),
		loc(".librewolf", true, cred, false, "a LibreWolf profile, with cookies and saved passwords"),
		loc(".zen", true, cred, false, "a Zen browser profile, with cookies and saved passwords"),
		loc(".floorp", true, cred, false, "a Floorp profile, with cookies and saved passwords"),
		loc(".waterfox", true, cred, false, "a Waterfox profile, with cookies and saved passwords"),
		loc(".thunderbird", true, cred, false, "a Thunderbird profile, with mail and saved passwords"),
		loc("snap/firefox", true, cred, false, "the snap Firefox's data, with its profile's cookies and saved passwords"),
		loc("snap/chromium", true, cred, false, "the snap Chromium's data, with its profile's cookies and saved passwords"),
		loc("snap/brave", true, cred, false, "the snap Brave's data, with its profile's cookies and saved passwords"),
		loc("snap/opera", true, cred, false, "the snap Opera's data, with its profile's cookies and saved passwords"),
		loc("snap/vivaldi", true, cred, false, "the snap Vivaldi's data, with its profile's cookies and saved passwords"),
		loc("snap/thunderbird", true, cred, false, "the snap Thunderbird's data, with mail and saved passwords"),
		loc(".var/app", true, cred, false, "a flatpak application's data, which holds browser profiles, cookies and tokens"),
		// Browsers the third serve review found missing: qutebrowser,
		// Falkon, Yandex, Thorium, and the caches of the common ones, whose
		// entries are keyed by the URLs visited. The names of their databases
		// (browserNames) are judged wherever an application keeps data; these
		// are the directories a sandbox hides whole.
		loc(".config/qutebrowser", true, cred, false, "a qutebrowser profile, with cookies and history"),
		loc(".local/share/qutebrowser", true, cred, false, "a qutebrowser profile, with cookies and history"),
		loc(".cache/qutebrowser", true, cred, false, "a qutebrowser cache, keyed by the URLs visited"),
		loc(".config/falkon", true, cred, false, "a Falkon profile, with cookies, history and saved passwords"),
		loc(".config/yandex-browser", true, cred, false, "a Yandex Browser profile, with cookies and saved passwords"),
		loc(".config/yandex-browser-beta", true, cred, false, "a Yandex Browser profile, with cookies and saved passwords"),
		loc(".config/thorium", true, cred, false, "a Thorium profile, with cookies and saved passwords"),
		loc(".cache/google-chrome", true, cred, false, "a Chrome cache, keyed by the URLs visited"),
		loc(".cache/chromium", true, cred, false, "a Chromium cache, keyed by the URLs visited"),
		loc(".cache/mozilla", true, cred, false, "a Firefox cache, keyed by the URLs visited"),
		loc(".cache/bravesoftware", true, cred, false, "a Brave cache, keyed by the URLs visited"),
		loc(".cache/microsoft-edge", true, cred, false, "an Edge cache, keyed by the URLs visited"),
		loc(".cache/vivaldi", true, cred, false, "a Vivaldi cache, keyed by the URLs visited"),
		loc(".cache/yandex-browser", true, cred, false, "a Yandex Browser cache, keyed by the URLs visited"),
		loc(".cache/thorium", true, cred, false, "a Thorium cache, keyed by the URLs visited"),
		loc("snap/yandex-browser", true, cred, false, "the snap Yandex Browser's data, with its profile's cookies and saved passwords"),
		loc("snap/thorium", true, cred, false, "the snap Thorium's data, with its profile's cookies and saved passwords"),
		loc("snap/microsoft-edge", true, cred, false, "the snap Edge's data, with its profile's cookies and saved passwords"),
		// macOS: Safari (its history and, sandboxed, its cookies), and the
		// Chromium-based browsers under Application Support.
		loc("library/safari", true, cred, false, "Safari's data, with its history"),
		loc("library/containers/com.apple.safari", true, cred, false, "Safari's sandboxed data, with its cookies and history"),
		loc("library/application support/arc", true, cred, false, "an Arc profile, with cookies and saved passwords"),
		loc("library/application support/bravesoftware", true, cred, false, "a Brave profile, with cookies and saved passwords"),
		loc("library/application support/microsoft edge", true, cred, false, "an Edge profile, with cookies and saved passwords"),
		loc("library/application support/chromium", true, cred, false, "a Chromium profile, with cookies and saved passwords"),
		loc("library/application support/vivaldi", true, cred, false, "a Vivaldi profile, with cookies and saved passwords"),
		loc("library/application support/com.operasoftware.opera", true, cred, false, "an Opera profile, with cookies and saved passwords"),
		loc("library/application support/yandex", true, cred, false, "a Yandex Browser profile, with cookies and saved passwords"),
		loc("library/application support/thorium", true, cred, false, "a Thorium profile, with cookies and saved passwords"),
		loc("library/application support/google/chrome", true, cred, false, "a Chrome profile, with cookies and saved passwords"),
		loc("library/application support/firefox", true, cred, false, "a Firefox profile, with cookies and saved passwords"),
		loc("library/cookies", true, cred, false, "a cookie store"),
		loc("library/keychains", true, cred, false, "a keychain"),
		loc(".local/share/keyrings", true, cred, false, "a keyring"),
		loc(".config/custom-agent", true, cred, true, "custom-agent's own configuration; the agent must not change its own rights"),
		loc(".local/share/custom-agent", true, cred, false, "custom-agent's own data: the event log, the outputs it keeps and the web UI's script token, which answers questions"),
		loc(".bashrc", false, execute, true, "a shell startup file, which runs in every new shell"),
		loc(".bash_profile", false, execute, true, "a shell startup file, which runs at login"),
		loc(".bash_login", false, execute, true, "a shell startup file, which runs at login"),
		loc(".bash_logout", false, execute, true, "a shell file, which runs at logout"),
		loc(".profile", false, execute, true, "a shell startup file, which runs at login"),
		loc(".zshrc", false, execute, true, "a shell startup file, which runs in every new shell"),
		loc(".zshenv", false, execute, true, "a shell startup file, which runs in every zsh"),
		loc(".zprofile", false, execute, true, "a shell startup file, which runs at login"),
		loc(".zlogin", false, execute, true, "a shell startup file, which runs at login"),
		loc(".config/fish", true, execute, true, "a fish configuration, which runs in every new shell"),
		loc(".config/autostart", true, execute, true, "an autostart entry, which runs at login"),
		loc(".config/systemd", true, execute, true, "a systemd user unit, which runs as a service"),
		loc("library/launchagents", true, execute, true, "a launchd agent, which runs at login"),
		loc(".claude.json", false, execute, true, "the Claude Code user configuration, whose MCP servers run code"),
		loc(".config/opencode", true, execute, true, "the opencode user configuration, whose plugins and MCP servers run code"),
		loc(".config/crush", true, execute, true, "the crush user configuration, whose MCP servers run code"),
		loc(".config/code/user", true, execute, true, "the VS Code user settings, whose tasks and settings run code"),
		loc("library/application support/code/user", true, execute, true, "the VS Code user settings, whose tasks and settings run code"),
		loc(".config/cursor/user", true, execute, true, "the Cursor user settings, whose tasks and settings run code"),
		loc(".gitconfig", false, execute, true, "the git configuration, whose aliases and hooks run commands"),
		loc(".config/git", true, execute, true, "the git configuration, whose aliases and hooks run commands"),
		loc(".vimrc", false, execute, true, "an editor startup file, which runs code"),
		loc(".config/nvim", true, execute, true, "an editor configuration, which runs code"),
		loc(".emacs", false, execute, true, "an editor startup file, which runs code"),
		loc(".emacs.d", true, execute, true, "an editor configuration, which runs code"),
	}
}

// sourceAnyLocations are the locations that match at any depth
// (anyLocations): in the project, in home, anywhere. A credential entry
// here starts with a dot, so that a shell glob such as `proj/*` (which does
// not match dot files) is not taken for one aimed at it
// (GlobMayMatchCredential).
func sourceAnyLocations() []location {
	return []location{
		loc(".ssh", true, cred, false, "in an .ssh directory, where SSH keys live"),
		loc(".gnupg", true, cred, false, "in a .gnupg directory, where GPG keys live"),
		loc(".aws/credentials", false, cred, false, "an AWS credential file"),
		loc(".git-credentials", false, cred, false, "a git credential file"),
		loc(".custom-agent", true, cred, true, "custom-agent's own policy and configuration; the agent must not change its own rights"),
		loc(".git/hooks", true, execute, true, "a git hook, which git runs later"),
		loc(".git", false, execute, true, "the git directory, whose config and hooks make git run code; replacing it replaces them"),
		loc(".git/modules/*/hooks", true, execute, true, "a submodule's git hook, which git runs later"),
		loc(".git/modules/*/config", false, cred, false, "a submodule's git configuration, which holds tokens in remote URLs and http.extraheader and can name commands git runs"),
		loc(".git/config.worktree", false, execute, true, "the worktree's git configuration, which can name commands git runs"),
		loc(".git/worktrees/*/config.worktree", false, execute, true, "a worktree's git configuration, which can name commands git runs"),
		loc(".git/objects/info/alternates", false, execute, true, "git alternates, which make git read objects from elsewhere"),
		loc(".netrc", false, cred, false, "a .netrc file, which holds passwords"),
		loc(".pgpass", false, cred, false, "a .pgpass file, which holds database passwords"),
		loc(".pypirc", false, cred, false, "a .pypirc file, which holds registry passwords"),
		loc(".kube/config", false, cred, false, "a Kubernetes credential file"),
		loc(".config/gh/hosts.yml", false, cred, false, "a GitHub CLI token file"),
		loc(".docker/config.json", false, cred, false, "a Docker credential file"),
		loc(".gem/credentials", false, cred, false, "a RubyGems credential file"),
		loc(".cargo/credentials", false, cred, false, "a Cargo credential file"),
		loc(".cargo/credentials.toml", false, cred, false, "a Cargo credential file"),
		loc(".terraform.d/credentials.tfrc.json", false, cred, false, "a Terraform credential file"),
		loc(".aws/sso/cache", true, cred, false, "the AWS SSO token cache"),
		loc(".aws/cli/cache", true, cred, false, "the AWS CLI credential cache"),
		loc(".azure/msal_token_cache.json", false, cred, false, "the Azure CLI token cache"),
		loc(".azure/accesstokens.json", false, cred, false, "the Azure CLI token cache"),
		loc(".terraform/terraform.tfstate", false, cred, false, "Terraform backend state, which can hold backend credentials"),
		loc(".yarnrc.yml", false, execute, true, "a Yarn configuration, which can name plugins and scripts Yarn runs"),
		loc(".pnpmfile.cjs", false, execute, true, "a pnpm hook file, which pnpm runs"),
		loc(".cargo/config.toml", false, execute, true, "a Cargo configuration, which can name programs Cargo runs"),
		loc(".cargo/config", false, execute, true, "a Cargo configuration, which can name programs Cargo runs"),
		loc(".mvn/jvm.config", false, execute, true, "Maven's JVM options (.mvn/jvm.config), which can name commands the JVM runs"),
		loc(".mvn/maven.config", false, execute, true, "Maven's options (.mvn/maven.config), which can name code Maven runs"),
		loc(".mvn/extensions.xml", false, execute, true, "Maven's extensions (.mvn/extensions.xml), code Maven loads"),
		loc("gradle/wrapper/gradle-wrapper.properties", false, execute, true, "the Gradle wrapper's properties, which name the Gradle the wrapper downloads and runs"),
		loc("lefthook.yml", false, execute, true, "a lefthook configuration, which runs git hooks"),
		loc("lefthook.yaml", false, execute, true, "a lefthook configuration, which runs git hooks"),
		loc(".lefthook.yml", false, execute, true, "a lefthook configuration, which runs git hooks"),
		loc(".cursorrules", false, execute, true, "agent instructions (.cursorrules), which steer what an agent runs"),
		loc("claude.md", false, execute, true, "agent instructions (CLAUDE.md), which steer what an agent runs"),
		loc("agents.md", false, execute, true, "agent instructions (AGENTS.md), which steer what an agent runs"),
		loc("gemini.md", false, execute, true, "agent instructions (GEMINI.md), which steer what an agent runs"),
		loc(".git/config", false, cred, false, "the repository's git configuration, which holds tokens in remote URLs and http.extraheader (actions/checkout) and can name commands git runs"),
		loc(".git/info/attributes", false, execute, true, "git attributes, which can name filters git runs"),
		loc(".husky", true, execute, true, "a husky git hook, which runs later"),
		// The directories projects commonly name in core.hooksPath (git
		// config core.hooksPath .githooks): git runs what they hold on the
		// next commit, checkout or merge. A hooks path named otherwise is not
		// known here (the repository's config is not read for writes).
		loc(".githooks", true, execute, true, "a git hooks directory (core.hooksPath), whose hooks git runs on the next commit"),
		loc("githooks", true, execute, true, "a git hooks directory (core.hooksPath), whose hooks git runs on the next commit"),
		loc(".git-hooks", true, execute, true, "a git hooks directory (core.hooksPath), whose hooks git runs on the next commit"),
		loc("git-hooks", true, execute, true, "a git hooks directory (core.hooksPath), whose hooks git runs on the next commit"),
		loc(".github/workflows", true, execute, true, "a CI workflow, which runs code"),
		loc(".circleci", true, execute, true, "a CircleCI configuration (.circleci), which runs code"),
		loc(".github/actions", true, execute, true, "a local GitHub Action, which a workflow runs as code (uses: ./.github/actions/…)"),
		loc(".gitea/workflows", true, execute, true, "a Gitea Actions workflow, which runs code"),
		loc(".forgejo/workflows", true, execute, true, "a Forgejo Actions workflow, which runs code"),
		loc(".gitlab/ci", true, execute, true, "GitLab CI configuration that .gitlab-ci.yml commonly includes, which runs code"),
		loc(".semaphore", true, execute, true, "a Semaphore CI pipeline directory, which runs code"),
		loc(".teamcity", true, execute, true, "a TeamCity configuration (Kotlin DSL), which runs code"),
		loc(".azure-pipelines", true, execute, true, "an Azure Pipelines directory (.azure-pipelines), whose pipelines run code"),
		loc(".buildkite", true, execute, true, "a Buildkite pipeline directory (.buildkite), whose steps and hooks run code"),
		loc(".woodpecker", true, execute, true, "a Woodpecker CI directory (.woodpecker), whose pipelines run code"),
		loc(".devcontainer", true, execute, true, "a dev container definition, which runs code when opened"),
		loc(".vscode", true, execute, true, "an editor configuration (.vscode), whose tasks and settings run code"),
		loc(".idea", true, execute, true, "an editor configuration (.idea), whose run configurations run code"),
		loc(".zed", true, execute, true, "an editor configuration (.zed), whose tasks run code"),
		loc(".claude", true, execute, true, "an agent configuration (.claude), whose hooks run code"),
		loc(".cursor", true, execute, true, "an agent configuration (.cursor), whose hooks and MCP servers run code"),
		loc(".gemini", true, execute, true, "an agent configuration (.gemini), whose hooks and MCP servers run code"),
		loc(".codex", true, execute, true, "an agent configuration (.codex), which runs code"),
		loc(".mcp.json", false, execute, true, "an MCP server list, whose servers run as programs"),
		loc(".roo", true, execute, true, "an agent configuration (.roo), whose rules and MCP servers steer and run code"),
		loc(".kiro", true, execute, true, "an agent configuration (.kiro), whose hooks, steering and MCP servers run code"),
		loc(".opencode", true, execute, true, "an agent configuration (.opencode), whose plugins, commands and MCP servers run code"),
		loc(".cline", true, execute, true, "an agent configuration (.cline), whose rules and MCP servers steer and run code"),
		loc(".clinerules", true, execute, true, "agent instructions (.clinerules), which steer what an agent runs"),
		loc(".continue", true, execute, true, "an agent configuration (.continue), whose MCP servers run code"),
		loc(".windsurf", true, execute, true, "an agent configuration (.windsurf), whose rules and workflows steer what an agent runs"),
		loc(".codeium", true, execute, true, "a Windsurf/Codeium configuration, whose MCP servers run code"),
		loc(".amazonq", true, execute, true, "an agent configuration (.amazonq), whose MCP servers run code"),
		loc(".kilocode", true, execute, true, "an agent configuration (.kilocode), whose rules and MCP servers run code"),
		loc(".trae", true, execute, true, "an agent configuration (.trae), whose rules and MCP servers run code"),
		loc(".qwen", true, execute, true, "an agent configuration (.qwen), whose hooks and MCP servers run code"),
		loc(".junie", true, execute, true, "an agent configuration (.junie), which steers what an agent runs"),
		loc(".crush", true, execute, true, "an agent configuration (.crush), whose MCP servers run code"),
		loc(".aider", true, execute, true, "an agent configuration (.aider), which runs code"),
		loc(".github/copilot-instructions.md", false, execute, true, "agent instructions (copilot-instructions.md), which steer what an agent runs"),
		loc(".github/instructions", true, execute, true, "agent instructions (.github/instructions), which steer what an agent runs"),
		loc(".github/prompts", true, execute, true, "agent prompts (.github/prompts), which steer what an agent runs"),
		loc(".github/hooks", true, execute, true, "agent hooks (.github/hooks), which an agent runs"),
		loc("site-packages", true, execute, true, "an installed Python package, which runs when imported"),
		loc("dist-packages", true, execute, true, "an installed Python package, which runs when imported"),
		loc(".venv", true, execute, true, "a virtualenv, whose scripts and packages run later"),
		loc("venv", true, execute, true, "a virtualenv, whose scripts and packages run later"),
		loc("bin/activate", false, execute, true, "a virtualenv activate script, which a shell runs"),
		loc("bin/activate.fish", false, execute, true, "a virtualenv activate script, which a shell runs"),
		loc("bin/activate.csh", false, execute, true, "a virtualenv activate script, which a shell runs"),
		loc("bin/activate.ps1", false, execute, true, "a virtualenv activate script, which a shell runs"),
		loc("bin/activate_this.py", false, execute, true, "a virtualenv activate script, which Python runs"),
		loc("scripts/activate", false, execute, true, "a virtualenv activate script, which a shell runs"),
		loc("scripts/activate.bat", false, execute, true, "a virtualenv activate script, which a shell runs"),
		loc("scripts/activate.ps1", false, execute, true, "a virtualenv activate script, which a shell runs"),
		loc("node_modules", true, execute, true, "an installed npm package, whose code and install scripts run later"),
		loc(".envrc", false, execute, true, "an .envrc, which direnv runs on entering the directory"),
		loc(".pre-commit-config.yaml", false, execute, true, "a pre-commit configuration, which runs hooks"),
	}
}

// The tables of locations Classify judges by are written above as loc
// calls, for people to read and change, and indexed in locations_gen.go
// (rootLocations, homeLocations, anyLocations) as static data the linker
// lays out: a process builds no table at start, which every hook call
// paid for. After changing a table, run go generate ./permission/pathrisk;
// TestLocationsGenerated fails until then.
//
//go:generate go test -run ^TestLocationsGenerated$$ -update-locations

// indexed holds a table by its first component for quick lookup.
type indexed struct {
	// byFirst are the locations by first component, sorted by it
	// (strings.Compare), each group's in table order (the first that
	// matches names the finding).
	byFirst  []firstGroup
	wildcard []location // first component is "*", in table order
	// keys passes byFirst's keys, so that a component no key could be
	// (most of a path: src, internal, main.go) is not looked up.
	keys *keyFilter
}

// A firstGroup holds the locations of a table whose first component is
// first.
type firstGroup struct {
	first string
	locs  []location
}

// first returns the locations whose first component is c.
func (ix *indexed) first(c string) []location {
	if !ix.keys.may(c) {
		return nil
	}
	i, ok := slices.BinarySearchFunc(ix.byFirst, c, func(g firstGroup, c string) int { return strings.Compare(g.first, c) })
	if !ok {
		return nil
	}
	return ix.byFirst[i].locs
}

// keyFilter is a bitmap of a table's keys by first byte and length, and by
// last byte and length: a string that matches no key on either cannot be
// one, so it is not looked up. Most path components and file names are in
// no table; a string that passes is looked up as before, so the filter
// changes no answer (TestKeyFilterPassesEveryKey).
type keyFilter struct {
	first, last [256]uint64 // bit len%64 of [byte]
}

// may reports whether s may be a key.
func (f *keyFilter) may(s string) bool {
	if s == "" {
		return false
	}
	bit := uint64(1) << (len(s) % 64)
	return f.first[s[0]]&bit != 0 && f.last[s[len(s)-1]]&bit != 0
}

// sourceCookieNames are the names of browser cookie and password stores,
// wherever they are (isCookieName, generated).
func sourceCookieNames() map[string]bool {
	return map[string]bool{
		"cookies": true, "cookies.sqlite": true, "cookies.binarycookies": true,
		"login data": true, "logins.json": true, "key3.db": true, "key4.db": true,
		"web data": true,
		// Firefox's (and its forks') history, form history, icons of the
		// pages visited and open tabs: names no other program uses.
		"places.sqlite": true, "formhistory.sqlite": true, "favicons.sqlite": true,
		"sessionstore.jsonlz4": true, "recovery.jsonlz4": true, "recovery.baklz4": true,
		"previous.jsonlz4": true, "login data for account": true,
	}
}

// HomeCredentials returns the credential locations of a home directory,
// relative to it and sorted (".aws", ".ssh", ".config/gh" …), custom-agent's
// own data and configuration among them: the places a sandbox hides. A
// component "*" stands for any one name (".ipython/*/history.sqlite"): the
// caller expands it as a glob. They
// are the entries of the table Classify judges by, so the analyser and the
// sandbox never disagree about what a secret is.
func HomeCredentials() []string {
	var out []string
	add := func(ls []location) {
		for _, l := range ls {
			if l.level >= risk.Credential {
				out = append(out, strings.Join(l.comps, "/"))
			}
		}
	}
	for _, g := range homeLocations.byFirst {
		add(g.locs)
	}
	add(homeLocations.wildcard)
	slices.Sort(out)
	return slices.Compact(out)
}

// ProtectedNames returns the protected locations that may lie in any
// directory, as paths relative to it with no wildcard (".git/hooks",
// ".github/workflows", ".custom-agent", ".vscode" …), sorted: the places
// a sandbox keeps a process from creating in its working directory.
func ProtectedNames() []string {
	var out []string
	add := func(ls []location) {
		for _, l := range ls {
			if l.level >= risk.Execute && l.writeOnly && !slices.Contains(l.comps, "*") {
				out = append(out, strings.Join(l.comps, "/"))
			}
		}
	}
	for _, g := range anyLocations.byFirst {
		add(g.locs)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
