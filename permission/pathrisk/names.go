package pathrisk

import (
	"slices"
	"strings"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// This file judges a file by its name alone, wherever it is: in the
// project, in a home directory, anywhere. Names are lower case (locate folds
// the path first). A secret file is a secret because of what it is, not
// where it sits, so a service-account key committed under secrets/ or a
// project-level .npmrc is credential like ~/.npmrc.

// sourceSecretNames are file names that hold credentials wherever they
// are, with what they are (secretName, generated).
func sourceSecretNames() map[string]string {
	return map[string]string{
		".npmrc":                               "an .npmrc, which holds registry tokens and names programs npm runs (node-options, script-shell)",
		".yarnrc.yml":                          "a Yarn configuration, which holds registry tokens (npmAuthToken)",
		".pypirc":                              "a .pypirc file, which holds registry passwords and names the repositories uploads go to",
		".netrc":                               "a .netrc file, which holds passwords",
		"_netrc":                               "a _netrc file, which holds passwords",
		".git-credentials":                     "a git credential file",
		".dockercfg":                           "a Docker credential file",
		".vault-token":                         "a Vault token",
		".pgpass":                              "a .pgpass file, which holds database passwords",
		".my.cnf":                              "a MySQL option file, which holds database passwords",
		".mylogin.cnf":                         "a MySQL login path file, which holds database passwords",
		".envrc":                               "a direnv .envrc, which exports secrets into the environment",
		".htpasswd":                            "an .htpasswd file, which holds password hashes",
		".s3cfg":                               "an .s3cfg file, which holds S3 access keys",
		".boto":                                "a .boto file, which holds cloud storage keys",
		".terraformrc":                         "a Terraform CLI configuration, which holds tokens",
		"terraform.rc":                         "a Terraform CLI configuration, which holds tokens",
		"kubeconfig":                           "a kubeconfig, which holds cluster credentials and names exec plugins kubectl runs",
		"kubeconfig.yaml":                      "a kubeconfig, which holds cluster credentials and names exec plugins kubectl runs",
		"kubeconfig.yml":                       "a kubeconfig, which holds cluster credentials and names exec plugins kubectl runs",
		"credentials.json":                     "a credential file (Google API and gcloud credentials)",
		"application_default_credentials.json": "the Google application default credentials",
		"key.json":                             "a service-account key (the name gcloud's own examples give it)",
		"keyfile.json":                         "a service-account key file",
		"secrets.yml":                          "a secrets file",
		"secrets.yaml":                         "a secrets file",
		"secrets.json":                         "a secrets file",
		"secrets.toml":                         "a secrets file",
		"secring.gpg":                          "a GPG secret key ring",
		"identity":                             "a private key",
		// aider keeps its transcripts in the project it runs in: what its
		// tools printed (an earlier `cat .env`) and what was typed.
		".aider.chat.history.md": "aider's transcript, which holds what its tools read and printed",
		".aider.input.history":   "aider's prompt history, where typed secrets remain",
	}
}

// The lookups of the name tables (secretName, secretExt, isCookieName,
// protectedFileName) and the filters byName checks first (cookieFilter,
// secretFilter, secretExtFilter) are generated into locations_gen.go, so
// that no map is built at start.

// sourceSecretExts are file name extensions of key and secret stores, with
// what they are (secretExt, generated).
func sourceSecretExts() map[string]string {
	return map[string]string{
		".pem":         "a PEM key or certificate file",
		".key":         "a private key file",
		".p8":          "a PKCS#8 private key (such as an App Store Connect key)",
		".p12":         "a PKCS#12 key store",
		".pfx":         "a PKCS#12 key store",
		".pkcs12":      "a PKCS#12 key store",
		".jks":         "a Java key store",
		".jceks":       "a Java key store",
		".bks":         "a BouncyCastle key store",
		".keystore":    "a key store",
		".keychain":    "a keychain",
		".keychain-db": "a keychain",
		".kdbx":        "a KeePass password database",
		".ppk":         "a PuTTY private key",
		".tfstate":     "a Terraform state file, which holds secrets in plain text",
		".kubeconfig":  "a kubeconfig, which holds cluster credentials and names exec plugins kubectl runs",
		".env":         "an environment file, which holds secrets",
	}
}

// isEnvTemplate reports whether s is one of the last dot-separated parts of
// .env file names that are templates: .env.example, .env.sample,
// .env.template, .env.dist (and .env.local.example). By convention they hold
// no secrets and are committed for everyone to copy, so they are read and
// written like any file.
func isEnvTemplate(s string) bool {
	switch s {
	case "example", "sample", "template", "dist":
		return true
	}
	return false
}

// isEnvFile reports whether name is a .env file that may hold secrets.
func isEnvFile(name string) bool {
	if name == ".env" {
		return true
	}
	if !strings.HasPrefix(name, ".env.") {
		return false
	}
	last := name[strings.LastIndexByte(name, '.')+1:]
	return !isEnvTemplate(last)
}

// keyTypes are the OpenSSH private key names ssh-keygen writes.
var keyTypes = [...]string{"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_xmss"}

// isSourceExt reports whether s is the extension of a source file, whose
// name may start like a key's (id_rsa_test.go) and is not a key.
func isSourceExt(s string) bool {
	switch s {
	case ".go", ".py", ".js", ".ts", ".rs", ".java", ".c",
		".h", ".rb", ".md", ".kt", ".swift", ".cs", ".php":
		return true
	}
	return false
}

// isPrivateKeyName reports whether name is an SSH private key by its name:
// id_rsa, id_ed25519 and the like with any suffix (id_rsa_work,
// id_ed25519.bak), any id_NAME without an extension (id_deploy), and
// NAME_rsa or NAME_ed25519 without an extension (deploy_rsa). A public key
// (.pub) is not secret, and source files (id_rsa_test.go) are not keys.
func isPrivateKeyName(name string) bool {
	if strings.HasSuffix(name, ".pub") {
		return false
	}
	dot := strings.LastIndexByte(name, '.')
	if strings.HasPrefix(name, "id_") { // every key type does (TestKeyTypesStartWithID)
		for _, k := range keyTypes {
			if strings.HasPrefix(name, k) {
				return dot <= 0 || !isSourceExt(name[dot:])
			}
		}
	}
	if dot >= 0 {
		return false
	}
	if strings.HasPrefix(name, "id_") && len(name) > len("id_") {
		return true
	}
	for _, s := range [...]string{"_rsa", "_dsa", "_ecdsa", "_ed25519"} {
		if strings.HasSuffix(name, s) && len(name) > len(s) {
			return true
		}
	}
	return false
}

// isServiceAccountJSON reports whether name is a cloud service-account key
// or OAuth client secret in JSON: what `gcloud iam service-accounts keys
// create`, the Firebase console and the Google Cloud console download, and
// the names people give them (prod-service-account.json, ci-sa-key.json,
// terraform-sa.json, gcp_credentials.json, client_secret_….json).
func isServiceAccountJSON(name string) bool {
	stem, ok := strings.CutSuffix(name, ".json")
	if !ok || stem == "" {
		return false
	}
	for _, w := range [...]string{
		"service-account", "service_account", "serviceaccount", "sa-key", "sa_key", "firebase-adminsdk",
		"client_secret", "credentials", "gcp-key", "gcp_key", "gcloud-key", "gcloud_key",
	} {
		if strings.Contains(stem, w) {
			return true
		}
	}
	if strings.Contains(stem, "public") {
		return false
	}
	for _, s := range [...]string{"-sa", "_sa", "-key", "_key", ".key"} {
		if strings.HasSuffix(stem, s) && len(stem) > len(s) {
			return true
		}
	}
	return false
}

// byName judges a file by its name alone.
func byName(name string) (risk.Level, string) {
	switch {
	case isEnvFile(name):
		return risk.Credential, "an environment file, which holds secrets"
	case isPrivateKeyName(name):
		return risk.Credential, "a private key"
	case cookieFilter.may(name) && isCookieName(name), isCookieName(stripSidecar(name)):
		return risk.Credential, "a browser's cookie, password or history store"
	}
	if secretFilter.may(name) {
		if w, ok := secretName(name); ok {
			return risk.Credential, w
		}
	}
	switch {
	case isServiceAccountJSON(name):
		return risk.Credential, "a cloud service-account key or OAuth client secret"
	case strings.HasSuffix(name, ".tfstate.backup"):
		return risk.Credential, "a Terraform state backup, which holds secrets in plain text"
	}
	if i := strings.LastIndexByte(name, '.'); i > 0 && secretExtFilter.may(name[i:]) {
		if w, ok := secretExt(name[i:]); ok {
			return risk.Credential, w
		}
	}
	return risk.Read, ""
}

// sourceProtectedNames are file names whose content a program runs later,
// on a command that looks harmless (npm install, pytest, eslint, bundle
// install): a write to one is at least execute wherever it is
// (protectedFileName and protectedFileNames, generated).
func sourceProtectedNames() map[string]string {
	return map[string]string{
		"package.json":        "a package.json, whose scripts (postinstall, test, …) npm runs",
		"composer.json":       "a composer.json, whose scripts Composer runs",
		"gemfile":             "a Gemfile, which Bundler runs as Ruby",
		"pyproject.toml":      "a pyproject.toml, whose build backend and tool plugins run code",
		"setup.py":            "a setup.py, which runs on install",
		"setup.cfg":           "a setup.cfg, which names code setuptools runs",
		"conftest.py":         "a conftest.py, which pytest runs when it collects tests",
		"noxfile.py":          "a noxfile, which nox runs",
		"tox.ini":             "a tox.ini, whose commands tox runs",
		"pytest.ini":          "a pytest.ini, which can load plugins pytest runs",
		"sitecustomize.py":    "a sitecustomize.py, which Python runs at startup",
		"usercustomize.py":    "a usercustomize.py, which Python runs at startup",
		"pyvenv.cfg":          "a virtualenv's pyvenv.cfg, which names the interpreter it runs",
		"build.rs":            "a Cargo build script, which cargo build and cargo check run",
		"rust-toolchain":      "a rust-toolchain file, which chooses the compiler cargo runs",
		"rust-toolchain.toml": "a rust-toolchain file, which chooses the compiler cargo runs",
		"mise.toml":           "a mise configuration, whose hooks and tasks run",
		".mise.toml":          "a mise configuration, whose hooks and tasks run",
		".pylintrc":           "a pylint configuration, which can load plugins",
		"pylintrc":            "a pylint configuration, which can load plugins",
		".clinerules":         "agent instructions (.clinerules), which steer what an agent runs",
		".windsurfrules":      "agent instructions (.windsurfrules), which steer what an agent runs",
		".roomodes":           "a Roo Code mode file, which steers what an agent runs",
		"opencode.json":       "an opencode configuration, whose MCP servers and permissions run code",
		"opencode.jsonc":      "an opencode configuration, whose MCP servers and permissions run code",
		"crush.json":          "a crush configuration, whose MCP servers and permissions run code",
		".crush.json":         "a crush configuration, whose MCP servers and permissions run code",
		".aider.conf.yml":     "an aider configuration, whose lint and test commands run",
		".goosehints":         "agent instructions (.goosehints), which steer what an agent runs",
		"mcp.json":            "an MCP server list, whose servers run as programs",
		"mcp_config.json":     "an MCP server list, whose servers run as programs",
		".gitlab-ci.yml":      "a CI pipeline, which runs code",
		".gitlab-ci.yaml":     "a CI pipeline, which runs code",
		// Other CI systems' pipelines, at the repository's root by default but
		// often pointed elsewhere, so protected by name wherever they are.
		".travis.yml":             "a Travis CI pipeline, which runs code",
		".travis.yaml":            "a Travis CI pipeline, which runs code",
		"jenkinsfile":             "a Jenkins pipeline (Jenkinsfile), which runs code",
		"azure-pipelines.yml":     "an Azure Pipelines pipeline, which runs code",
		"azure-pipelines.yaml":    "an Azure Pipelines pipeline, which runs code",
		"bitbucket-pipelines.yml": "a Bitbucket Pipelines pipeline, which runs code",
		".drone.yml":              "a Drone CI pipeline, which runs code",
		".drone.yaml":             "a Drone CI pipeline, which runs code",
		".drone.jsonnet":          "a Drone CI pipeline, which runs code",
		".drone.star":             "a Drone CI pipeline, which runs code",
		".woodpecker.yml":         "a Woodpecker CI pipeline, which runs code",
		".woodpecker.yaml":        "a Woodpecker CI pipeline, which runs code",
		"appveyor.yml":            "an AppVeyor pipeline, which runs code",
		".appveyor.yml":           "an AppVeyor pipeline, which runs code",
		"cloudbuild.yaml":         "a Google Cloud Build pipeline, which runs code",
		"cloudbuild.yml":          "a Google Cloud Build pipeline, which runs code",
		"buildspec.yml":           "an AWS CodeBuild build spec, which runs code",
		"buildspec.yaml":          "an AWS CodeBuild build spec, which runs code",
		".cirrus.yml":             "a Cirrus CI pipeline, which runs code",
		"codemagic.yaml":          "a Codemagic pipeline, which runs code",
		"bitrise.yml":             "a Bitrise pipeline, which runs code",
		// Start-up files of debuggers and REPLs, run as code when they start
		// in the project, and asdf's version file, which chooses the programs
		// its shims run.
		".pdbrc":            "a pdb start-up file, whose lines pdb runs as Python when a debugger starts here",
		".pdbrc.py":         "a pdb start-up file, which pdb runs as Python when a debugger starts here",
		".irbrc":            "an irb start-up file, which irb runs as Ruby when it starts here",
		".pryrc":            "a pry start-up file, which pry runs as Ruby when it starts here",
		".tool-versions":    "an asdf/mise version file (.tool-versions), which chooses the programs their shims run here",
		"deno.json":         "a Deno configuration, whose tasks and import maps choose the code deno runs",
		"deno.jsonc":        "a Deno configuration, whose tasks and import maps choose the code deno runs",
		"mypy.ini":          "a mypy configuration, which can load plugins",
		".pytest.ini":       "a pytest.ini, which can load plugins pytest runs",
		".gitconfig":        "a git configuration, which a repository's config may include, naming programs git runs (core.fsmonitor, hooks)",
		".bazelrc":          "a Bazel configuration, whose options (--run_under) name programs Bazel runs",
		"gradle.properties": "Gradle's properties, whose JVM options can name commands the JVM runs",
		".yarnrc":           "a Yarn 1 configuration, whose yarn-path names the program Yarn runs",
		"bunfig.toml":       "a Bun configuration, whose preload scripts Bun runs",
		".mypy.ini":         "a mypy configuration, which can load plugins",
		// Credential files that also name programs to run or places to send
		// to: protected as well, so that one a command makes where none was
		// is removed like the other run-code configurations (the credential
		// level, higher, still decides reads and writes).
		".npmrc":          "an .npmrc, whose node-options and script-shell name programs npm runs",
		".pypirc":         "a .pypirc, which names the repositories twine and setuptools upload to, with their passwords",
		"kubeconfig":      "a kubeconfig, whose exec plugins kubectl runs",
		"kubeconfig.yaml": "a kubeconfig, whose exec plugins kubectl runs",
		"kubeconfig.yml":  "a kubeconfig, whose exec plugins kubectl runs",
	}
}

// protectedStems are names of configuration files that run code, in every
// extension: a name is protected when it is the stem itself (.eslintrc) or
// the stem followed by a dot and anything with a configuration extension
// (eslint.config.mjs, .eslintrc.json, tsconfig.build.json). Linters, formatters, test runners
// and bundlers load these, and the plugins they name, on every run.
var protectedStems = [...]string{
	"eslint.config", ".eslintrc", "prettier.config", ".prettierrc", "jest.config", "vitest.config",
	"vite.config", "webpack.config", "rollup.config", "babel.config", ".babelrc", "postcss.config",
	"tailwind.config", "next.config", "nuxt.config", "svelte.config", "astro.config", "vue.config",
	"playwright.config", "cypress.config", "karma.conf", "stylelint.config", ".stylelintrc",
	"commitlint.config", ".commitlintrc", "lint-staged.config", ".lintstagedrc", ".mocharc",
	"tsconfig", ".swcrc", "esbuild.config", "tsup.config", ".huskyrc", ".releaserc", "release.config",
}

// isConfigExt reports whether s is an extension a configuration file of
// protectedStems may have; tsconfig.go is source, not configuration.
func isConfigExt(s string) bool {
	switch s {
	case "js", "cjs", "mjs", "ts", "cts", "mts", "json",
		"jsonc", "json5", "yaml", "yml", "toml", "coffee":
		return true
	}
	return false
}

// protectedName judges a write by the file's name alone: the level and
// what the file is, or 0 when the name is ordinary.
func protectedName(name string) (risk.Level, string) {
	if w, ok := protectedFileName(name); ok {
		return risk.Execute, w
	}
	if strings.HasSuffix(name, ".code-workspace") {
		return risk.Execute, "an editor workspace file, whose tasks and settings run code"
	}
	if strings.HasSuffix(name, ".kubeconfig") {
		return risk.Execute, "a kubeconfig, whose exec plugins kubectl runs"
	}
	if strings.HasSuffix(name, ".pth") {
		// Python runs lines starting with "import" in .pth files of its
		// site directories at every start; elsewhere they are inert, but
		// which directories are site directories is the machine's choice.
		return risk.Execute, "a Python .pth file, which Python runs at startup from a site directory"
	}
	ext := ""
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		ext = name[i+1:]
	}
	for _, s := range protectedStems {
		if name == s || len(name) > len(s) && name[len(s)] == '.' && strings.HasPrefix(name, s) && isConfigExt(ext) {
			return risk.Execute, "a tool configuration (" + s + "), which loads code the tool runs"
		}
	}
	return 0, ""
}

// ProtectedFileNames returns the file names (lower case, sorted) whose
// content a program runs later wherever they are: package.json,
// conftest.py, opencode.json, .aider.conf.yml … (the by-name table of
// Classify).
func ProtectedFileNames() []string {
	return slices.Clone(protectedFileNames[:])
}

// ProtectedName reports whether a file or directory named name (one
// component, any letter case) is protected by its name alone, wherever it
// is: a write that makes it plants code a tool run in that directory
// reads (.npmrc, .yarnrc, bunfig.toml, conftest.py, eslint.config.js,
// x.code-workspace, .vscode, .claude, AGENTS.md …). It is the by-name
// part of Protected, for a sandbox that must guard names no file holds
// yet.
func ProtectedName(name string) bool {
	n := strings.ToLower(name)
	if l, _ := protectedName(n); l >= risk.Execute {
		return true
	}
	return singleProtected(n)
}

// singleProtected reports whether n, lower case, is a one-component
// protected location that matches at any depth (.vscode, .claude, .envrc,
// agents.md …).
func singleProtected(n string) bool {
	for _, l := range anyLocations.first(n) {
		if len(l.comps) == 1 && l.writeOnly && l.level >= risk.Execute {
			return true
		}
	}
	return false
}
