package pathrisk_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/permission/pathrisk"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// Secret files are judged by what they are, wherever they sit (issue 9 §3):
// every one of these is read inside the project, where nothing else raises.
func TestSecretFilesByName(t *testing.T) {
	t.Parallel()
	secret := []string{
		"secrets/prod-service-account.json", "deploy/ci-sa-key.json", "infra/terraform-sa.json",
		"keys/my-project-firebase-adminsdk-abc12-0123456789.json", "client_secret_1234.apps.googleusercontent.com.json",
		"credentials.json", "config/gcloud/application_default_credentials.json", "key.json", "gcp_credentials.json",
		"certs/server.pem", "tls/server.key", "config/master.key", "sign/release.p12", "sign/cert.pfx",
		"android/app/upload.jks", "android/debug.keystore", "AuthKey_ABC123.p8", "secrets/store.jceks",
		"keys/id_rsa", "keys/id_ed25519", "deploy/id_rsa_github", "backup/id_ed25519.bak", "keys/id_deploy",
		"keys/deploy_rsa", "keys/github_ed25519",
		".npmrc", "web/.npmrc", ".yarnrc.yml", ".pypirc", ".netrc", "_netrc", ".git-credentials",
		".dockercfg", ".docker/config.json", "kubeconfig", "ops/prod.kubeconfig", "ops/kubeconfig.yaml",
		".kube/config", "terraform.tfstate", "infra/terraform.tfstate.backup", ".terraform/terraform.tfstate",
		".vault-token", ".pgpass", ".my.cnf", ".envrc", "config/secrets.yml", "secrets.json", ".htpasswd",
		".git/config", ".git/modules/sub/config", ".git/modules/vendor/lib/config", ".env", ".env.local", ".env.production", "docker/db.env",
		".ENV.Local", "Secrets/PROD.PEM", ".gem/credentials", ".cargo/credentials.toml", ".aws/sso/cache/x.json",
	}
	for _, p := range secret {
		for _, write := range []bool{false, true} {
			if got, why := pathrisk.Classify(pathrisk.PathFacts{Raw: p, Write: write}, env); got != risk.Credential || why == "" {
				t.Errorf("Classify(%q, write=%v) = %v (%q), want credential with a reason", p, write, got, why)
			}
		}
		c, _ := pathrisk.Canonical(p, env)
		if !pathrisk.IsCredential(c, env) {
			t.Errorf("IsCredential(%q) = false", c)
		}
	}
	// Look-alikes: templates of .env files, public keys, and files whose
	// names merely contain "key" or "id_" hold no secrets (issue 9 §5).
	plain := []string{
		".env.example", ".env.sample", ".env.template", ".env.dist", "config/.env.local.example", ".ENV.EXAMPLE",
		"keys/id_rsa.pub", "keys/id_ed25519.pub", "keys/id_rsa-cert.pub", "keyboard.go", "monkey.py", "keys.go",
		"internal/id_test.go", "id_rsa_test.go", "src/identity.ts", "docs/keys.md", "package.json", "tsconfig.json",
		"service.go", "accounts.json", "public-key.json", "env.go", "environment.ts", "src/envrc.go",
		"secrets.go", "docs/secrets.md", "secrets.enc.yaml", "kube/deployment.yaml", "terraform/main.tf",
		".gitignore", ".git/HEAD", ".github/workflows/ci.yml", "config.yml", "README.md", "Makefile",
	}
	for _, p := range plain {
		if got, why := pathrisk.Classify(pathrisk.PathFacts{Raw: p}, env); got != risk.Read {
			t.Errorf("Classify(%q) = %v (%q), want read", p, got, why)
		}
	}
	for _, p := range []string{".env.example", ".env.sample", ".env.template", ".env.dist", "keys/id_rsa.pub", "keyboard.go", "monkey.py"} {
		if got, why := pathrisk.Classify(pathrisk.PathFacts{Raw: p, Write: true}, env); got != risk.Write {
			t.Errorf("Classify(write %q) = %v (%q), want write", p, got, why)
		}
	}
}

// A NUL ends a name for the kernel and every C program: ".env\x00.txt" is
// judged as .env too, and any control character is suspicious by itself.
func TestControlCharacters(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]risk.Level{
		".env\x00.txt":          risk.Credential,
		"keys/id_rsa\x00.pub":   risk.Credential,
		"/home/u/.ssh\x00/x":    risk.Credential,
		"notes\x00.txt":         risk.Write,
		"notes\n.txt":           risk.Write,
		"src/\x1b[2Jmain.go":    risk.Write,
		"README\x7f.md":         risk.Write,
		".git/hooks\x00/x.txt":  risk.Write, // a read of a hook is a read, raised for the NUL
		"README.md\u00a0copy":   risk.Read,  // not ASCII control
		"résumé/über.txt":       risk.Read,
		"dir\twith\ttabs/a.txt": risk.Write,
	} {
		got, why := pathrisk.Classify(pathrisk.PathFacts{Raw: raw}, env)
		if got != want {
			t.Errorf("Classify(%q) = %v (%q), want %v", raw, got, why, want)
		}
		if got > risk.Read && why == "" {
			t.Errorf("Classify(%q) raised without a reason", raw)
		}
	}
	if !pathrisk.Protected(pathrisk.PathFacts{Raw: ".git/hooks/pre-commit\x00.sample", Write: true}, env) {
		t.Error("a write to a hook cut at NUL must be protected")
	}
	for s, want := range map[string]int{"": -1, "abc": -1, "a\x00": 1, "\x1f": 0, "ab\x7f": 2, "é": -1} {
		if got := pathrisk.FirstControl(s); got != want {
			t.Errorf("FirstControl(%q) = %d, want %d", s, got, want)
		}
		if pathrisk.HasControl(s) != (want >= 0) {
			t.Errorf("HasControl(%q) disagrees with FirstControl", s)
		}
	}
}

// Writes that run later (issue 9 §4) are at least execute and protected,
// inside the project too; ordinary source edits stay plain writes.
func TestWritesThatRunLater(t *testing.T) {
	t.Parallel()
	protected := []string{
		".venv/lib/python3.12/site-packages/evil.pth", "/usr/lib/python3/dist-packages/x.pth", "evil.pth",
		".venv/bin/activate", "venv/bin/activate.fish", "env/bin/activate", "myenv/Scripts/Activate.ps1",
		".venv/bin/python", "venv/lib/python3.12/site-packages/requests/__init__.py", "pyvenv.cfg",
		"~/.local/lib/python3.12/site-packages/sitecustomize.py", "sitecustomize.py", "usercustomize.py",
		"package.json", "web/package.json", "node_modules/lodash/index.js", "node_modules/.bin/eslint",
		"composer.json", "Gemfile",
		".roo/mcp.json", ".roomodes", ".kiro/settings/mcp.json", ".kiro/hooks/x.kiro.hook", "opencode.json",
		".opencode/plugin/x.ts", ".clinerules", ".clinerules/rules.md", ".cline/mcp.json", ".cursor/rules/x.mdc",
		".claude/settings.local.json", ".mcp.json", ".vscode/settings.json", ".vscode/tasks.json",
		".continue/config.yaml", ".windsurf/rules/x.md", ".windsurfrules", "~/.codeium/windsurf/mcp_config.json",
		".amazonq/mcp.json", "~/.claude.json", "~/.config/opencode/opencode.json", "~/.config/Code/User/settings.json",
		".github/copilot-instructions.md", "crush.json", ".aider.conf.yml",
		"eslint.config.js", "eslint.config.mjs", ".eslintrc", ".eslintrc.json", ".eslintrc.cjs", "prettier.config.js",
		".prettierrc", ".prettierrc.mjs", "jest.config.ts", "vite.config.ts", "vitest.config.mts", "webpack.config.js",
		"babel.config.js", ".babelrc", "tsconfig.json", "tsconfig.build.json", "playwright.config.ts",
		"pyproject.toml", "setup.py", "setup.cfg", "conftest.py", "tests/conftest.py", "tox.ini", "noxfile.py",
		"pytest.ini", "build.rs", "rust-toolchain.toml", ".pre-commit-config.yaml", "proj.code-workspace",
		// JVM and build-tool options files a test command reads: a
		// seventh reviewer ran rm -rf through .mvn/jvm.config.
		".mvn/jvm.config", "sub/.mvn/maven.config", ".mvn/extensions.xml", ".bazelrc", "gradle.properties",
		"gradle/wrapper/gradle-wrapper.properties", ".yarnrc", "bunfig.toml", ".pytest.ini",
		// A tenth reviewer: hooks directories projects name in
		// core.hooksPath, and a .gitconfig a repository may include.
		".githooks/pre-commit", "githooks/post-checkout", ".git-hooks/pre-push", "git-hooks/commit-msg", ".gitconfig",
		".git/modules/vendor/lib/hooks/post-checkout", ".git/modules/a/b/c/hooks/pre-commit",
	}
	for _, p := range protected {
		f := pathrisk.PathFacts{Raw: p, Write: true}
		if got, why := pathrisk.Classify(f, env); got < risk.Execute || why == "" {
			t.Errorf("Classify(write %q) = %v (%q), want at least execute", p, got, why)
		}
		if !pathrisk.Protected(f, env) {
			t.Errorf("Protected(write %q) = false", p)
		}
		c, _ := pathrisk.Canonical(p, env)
		if pathrisk.Sensitive(c, env, true) == nil {
			t.Errorf("Sensitive(%q) = nil: a rule could cover it without naming it", c)
		}
		// Reading them is a plain read.
		if got, why := pathrisk.Classify(pathrisk.PathFacts{Raw: p}, env); got >= risk.Credential {
			t.Errorf("Classify(read %q) = %v (%q), want below credential", p, got, why)
		}
	}
	plain := []string{
		"src/main.go", "src/index.ts", "app.py", "lib/util.js", "Makefile", "README.md", "docs/eslint.md",
		"src/package.go", "tests/test_app.py", "src/config.ts", "model.pt", "env/README.md", "src/venvutil.py",
		"package-lock.json", "src/eslint-rules.ts", "cmd/setup/main.go", "jestconfig.md", "src/tsconfig.go",
	}
	for _, p := range plain {
		f := pathrisk.PathFacts{Raw: p, Write: true}
		if got, why := pathrisk.Classify(f, env); got != risk.Write {
			t.Errorf("Classify(write %q) = %v (%q), want write", p, got, why)
		}
		if pathrisk.Protected(f, env) {
			t.Errorf("Protected(write %q) = true", p)
		}
	}
}

func TestGlobsAimedAtKindsNotSecrets(t *testing.T) {
	t.Parallel()
	for glob, want := range map[string]bool{
		"*.json": false, "**/*.yml": false, "*.yaml": false, "*.toml": false, "*config*": false,
		"**/.npmrc": true, "*.kubeconfig": true, "*.tfstate*": true, "**/*service-account*.json": true,
		"*.env": true, "*.env*": true, ".env*": true, "**/credentials.json": true, "*.p8": true, ".git-cred*": true,
	} {
		if _, got := pathrisk.GlobTargetsCredential(glob); got != want {
			t.Errorf("GlobTargetsCredential(%q) = %v, want %v", glob, got, want)
		}
	}
}

// A rule covers a sensitive file only when it names it: for a nested
// submodule's config or hook that is the whole path from .git on, and for a
// file judged by its name, the name.
func TestSensitiveNamesWhatARuleMustName(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]string{
		"/home/u/proj/.git/modules/vendor/lib/config":              ".git/modules/vendor/lib/config",
		"/home/u/proj/.git/modules/vendor/lib/hooks/post-checkout": ".git/modules/vendor/lib/hooks/post-checkout",
		"/home/u/proj/.git/config":                                 ".git/config",
		"/home/u/proj/secrets/prod-service-account.json":           "prod-service-account.json",
		"/home/u/proj/web/package.json":                            "package.json",
		"/home/u/proj/.npmrc":                                      ".npmrc",
	} {
		got := strings.Join(pathrisk.Sensitive(p, env, true), "/")
		if got != want {
			t.Errorf("Sensitive(%q) = %q, want %q", p, got, want)
		}
	}
	if s := pathrisk.Sensitive("/home/u/proj/src/main.go", env, true); s != nil {
		t.Errorf("Sensitive(src/main.go) = %q, want nil", s)
	}
}

// TestHistoriesAndTranscripts (sixth review, finding 9): shell and REPL
// histories, editor state and other agents' transcripts in a home are
// credential for reads, so the engine asks and the sandbox hides them
// (HomeCredentials); names that merely resemble them are not.
func TestHistoriesAndTranscripts(t *testing.T) {
	t.Parallel()
	secret := []string{
		"~/.zhistory", "~/.histfile", "~/.sh_history", "~/.config/zsh/.zsh_history", "~/.local/share/zsh/history",
		"~/.ipython/profile_default/history.sqlite", "~/.ipython/profile_work/history.sqlite", "~/.sqlite_history",
		"~/.rediscli_history", "~/.viminfo", "~/.lesshst", "~/.python_history", "~/.node_repl_history",
		"~/.psql_history", "~/.mysql_history", "~/.irb_history", "~/.zsh_sessions/abc.history",
		"~/.claude/projects/-work-proj/0b1c.jsonl", "~/.claude/history.jsonl", "~/.codex/sessions/2026/11/30/rollout-1.jsonl",
		"~/.codex/history.jsonl", "~/.gemini/tmp/ab12/logs.json", "~/.config/Code/User/globalStorage/state.vscdb",
		"~/.local/state/nvim/shada/main.shada", "/root/.zhistory", "/home/other/.claude/projects/x/y.jsonl",
		".aider.chat.history.md", "sub/.aider.input.history",
	}
	for _, p := range secret {
		if got, why := pathrisk.Classify(pathrisk.PathFacts{Raw: p}, env); got != risk.Credential || why == "" {
			t.Errorf("Classify(read %q) = %v (%q), want credential with a reason", p, got, why)
		}
	}
	homes := pathrisk.HomeCredentials()
	for _, rel := range []string{".zhistory", ".ipython/*/history.sqlite", ".claude/projects", ".codex/sessions", ".gemini/tmp", ".config/code/user/globalstorage/state.vscdb", ".viminfo", ".lesshst"} {
		if !slices.Contains(homes, rel) {
			t.Errorf("HomeCredentials() lacks %q", rel)
		}
	}
	// Look-alikes: a project's own files of these names, the agents'
	// settings (judged for writes, not hidden), and IPython's
	// configuration are read like any file.
	plain := []string{
		"docs/history.md", "src/history.go", "zhistory.txt", "~/.claude/settings.json", "~/.codex/config.toml",
		"~/.gemini/settings.json", "~/.ipython/profile_default/ipython_config.py", "~/.config/Code/User/settings.json",
		"~/.config/zsh/.zshrc", "history.sqlite", "projects/a.jsonl", "sessions/x.jsonl", "aider.chat.history.md.bak",
	}
	for _, p := range plain {
		if got, why := pathrisk.Classify(pathrisk.PathFacts{Raw: p}, env); got == risk.Credential {
			t.Errorf("Classify(read %q) = %v (%q), want no credential", p, got, why)
		}
	}
}

// TestRunConfigNames (sixth review, finding 7): .npmrc (node-options),
// .pypirc and kubeconfigs (exec plugins) are protected names as well as
// credential ones, so a sandbox removes one a command made; ProtectedName
// answers for one component, as a sandbox asks for a name no file holds
// yet. Look-alikes stay plain.
func TestRunConfigNames(t *testing.T) {
	t.Parallel()
	for _, p := range []string{".npmrc", "web/.npmrc", ".pypirc", "kubeconfig", "ops/kubeconfig.yaml", "ops/prod.kubeconfig"} {
		f := pathrisk.PathFacts{Raw: p, Write: true}
		got, why := pathrisk.Classify(f, env)
		if got != risk.Credential || why == "" {
			t.Errorf("Classify(write %q) = %v (%q), want credential with a reason", p, got, why)
		}
		if !pathrisk.Protected(f, env) {
			t.Errorf("Protected(write %q) = false", p)
		}
	}
	if why := mustWhy(t, ".npmrc"); !strings.Contains(why, "node-options") {
		t.Errorf("the reason for writing .npmrc does not say what runs: %q", why)
	}
	names := pathrisk.ProtectedFileNames()
	for _, n := range []string{".npmrc", ".pypirc", "kubeconfig", ".yarnrc", ".irbrc", "bunfig.toml"} {
		if !slices.Contains(names, n) {
			t.Errorf("ProtectedFileNames() lacks %q", n)
		}
	}
	for _, n := range []string{
		".npmrc", ".NPMRC", ".yarnrc", ".irbrc", "bunfig.toml", "kubeconfig", "prod.kubeconfig", ".pypirc",
		"proj.code-workspace", "X.Code-Workspace", "eslint.config.js", "tsconfig.build.json", "conftest.py",
		".vscode", ".claude", "AGENTS.md", ".envrc", ".custom-agent", "package.json", "node_modules", "x.pth",
	} {
		if !pathrisk.ProtectedName(n) {
			t.Errorf("ProtectedName(%q) = false", n)
		}
	}
	for _, n := range []string{
		"npmrc", "npmrc.txt", ".npmrc.example", "src", "main.go", "kubeconfig.go", "yarnrc.go", "notes.code-workspace.md",
		"tsconfig.go", "conftest_test.go", "eslint.md", ".github", "workflows", ".git-credentials", ".ssh", ".env", "model.pt",
	} {
		if pathrisk.ProtectedName(n) {
			t.Errorf("ProtectedName(%q) = true", n)
		}
	}
}

func mustWhy(t *testing.T, p string) string {
	t.Helper()
	_, why := pathrisk.Classify(pathrisk.PathFacts{Raw: p, Write: true}, env)
	return why
}
