package shellrisk

import (
	"strings"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// Secrets printed by tools (issue 9 §4): commands that print a secret to
// the output the model reads, without naming a secret file. Each is a
// credential source (credSource), so piping it to the network, encoded or
// encrypted first, stays credential: environment dumps inside containers
// (docker inspect, docker exec … env, kubectl exec … env), shell
// histories (history, fc -l), CLIs that print tokens or secret values
// (kubectl get secret -o yaml, gh auth status -t, aws configure
// export-credentials, aws secretsmanager get-secret-value, heroku config,
// terraform output -json, gpg --export-secret-keys, docker-credential-*
// get, git config over credential keys, npm config get …:_authToken), and
// searches that hunt key material by pattern (grep -r 'BEGIN … PRIVATE
// KEY', find -name '*.pem' -exec cat). Reading one variable whose name is
// no secret (printenv PATH), listing secrets by name (kubectl get secrets)
// and describing them (kubectl describe secret) print no secret.

// printsSecret records a credential source and its finding.
func (a *analyzer) printsSecret(sp risk.Span, what, why string) {
	a.credSource(sp, what)
	a.find(risk.Credential, sp, why)
}

// secretValueName reports a variable or setting name whose value is a
// secret: by its name (secretName), or a URL or DSN, which carries its
// password (DATABASE_URL, REDIS_URL, SENTRY_DSN).
func secretValueName(n string) bool {
	if secretName(n) {
		return true
	}
	u := strings.ToUpper(n)
	return strings.HasSuffix(u, "_URL") || strings.HasSuffix(u, "_URI") || strings.HasSuffix(u, "_DSN") || strings.HasSuffix(u, "CONNECTION_STRING")
}

// secretsExtra adds the findings of this file for programs that have a
// rule of their own; ruleThen calls it.
func (a *analyzer) secretsExtra(c *call, name string) {
	switch name {
	case "docker", "podman", "nerdctl":
		a.containerSecrets(c, name)
	case "kubectl", "oc":
		a.kubectlSecrets(c, name)
	case "terraform", "tofu", "terragrunt":
		a.terraformSecrets(c, name)
	case "vault":
		for _, w := range [][]string{{"print", "token"}, {"token", "create"}} {
			if sp, ok := seq(c, w...); ok {
				a.printsSecret(sp, "a Vault token", "vault "+strings.Join(w, " ")+" prints a Vault token")
				return
			}
		}
	case "gh", "glab":
		if sp, ok := seq(c, "auth", "status"); ok {
			if x, ok := flag(c, "-t", "--show-token"); ok {
				a.printsSecret(wordsSpan(arg{sp: sp}, x), "a "+name+" token", name+" auth status "+x.s+" prints the access token")
			}
		}
	case "aws":
		a.awsSecrets(c)
	case "gcloud":
		for _, w := range [][]string{{"secrets", "versions", "access"}, {"config", "config-helper"}, {"service-accounts", "keys", "create"}, {"sql", "generate-login-token"}} {
			if sp, ok := seq(c, w...); ok {
				a.printsSecret(sp, "a Google Cloud secret", "gcloud "+strings.Join(w, " ")+" prints or creates a secret, key or access token")
				return
			}
		}
	case "az":
		for _, w := range [][]string{{"secret", "show"}, {"secret", "download"}, {"keys", "list"}, {"list-keys"}, {"show-connection-string"},
			{"credential", "show"}, {"create-for-rbac"}, {"list-publishing-credentials"}, {"list-connection-strings"}} {
			if sp, ok := seq(c, w...); ok {
				a.printsSecret(sp, "an Azure secret", "az "+strings.Join(w, " ")+" prints secret values, keys or passwords")
				return
			}
		}
	case "doctl":
		for _, w := range [][]string{{"kubeconfig", "show"}, {"docker-config"}} {
			if sp, ok := seq(c, w...); ok {
				a.printsSecret(sp, "a DigitalOcean credential", "doctl "+strings.Join(w, " ")+" prints a configuration holding an access token")
				return
			}
		}
	case "heroku":
		ops := operands(c, 1)
		if len(ops) == 0 {
			return
		}
		x := c.args[ops[0]]
		switch x.s {
		case "config", "auth:token", "pg:credentials:url", "redis:credentials":
			a.printsSecret(x.sp, "Heroku config vars", "heroku "+x.s+" prints config vars or tokens, database URLs with their passwords among them")
		case "config:get":
			for _, k := range ops[1:] {
				if y := c.args[k]; y.dyn || secretValueName(y.s) {
					a.printsSecret(wordsSpan(x, y), "a Heroku config var", "heroku config:get "+y.s+" prints a secret value")
					return
				}
			}
		}
	case "netlify":
		if x, ok := task(c, "env:get"); ok {
			for _, k := range operands(c, 1) {
				if y := c.args[k]; y.s != x.s && (y.dyn || secretValueName(y.s)) {
					a.printsSecret(wordsSpan(x, y), "a Netlify variable", "netlify env:get "+y.s+" prints a secret value")
					return
				}
			}
		}
	case "firebase":
		if x, ok := task(c, "functions:config:get", "functions:secrets:access"); ok {
			a.printsSecret(x.sp, "Firebase runtime configuration", "firebase "+x.s+" prints the functions' configuration and secrets")
		}
	case "git":
		a.gitConfigSecrets(c)
	case "npm", "pnpm", "yarn":
		a.npmSecrets(c, name)
	case "gpg", "gpg2":
		for _, x := range c.args[1:] {
			switch x.s {
			case "--export-secret-keys", "--export-secret-subkeys", "-d", "--decrypt", "--decrypt-files":
				a.printsSecret(x.sp, "a private key or decrypted data", name+" "+x.s+" prints a private key or the plaintext of encrypted data")
				return
			}
		}
	case "find":
		a.findKeys(c)
	case "grep", "egrep", "fgrep", "rg", "ripgrep":
		a.grepKeys(c, name)
	}
}

// rulePrintsSecret judges programs of this file that have no other rule.
func rulePrintsSecret(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	switch {
	case name == "history":
		for _, x := range c.args[1:] {
			if x.dyn || !isDigits(x.s) {
				return // -c, -d, -w, -a, -r, -n, -s, -p change or read the list
			}
		}
		a.printsSecret(c.sp, "the shell history", "history prints the commands typed before, secrets typed in them included")
	case name == "fc":
		if x, ok := hasArg(c, func(s string) bool { return strings.HasPrefix(s, "-") && strings.ContainsRune(s, 'l') }); ok {
			a.printsSecret(x.sp, "the shell history", "fc -l lists the commands typed before, secrets typed in them included")
			return
		}
		a.opaque(c.sp, "fc runs commands taken from the shell history, which cannot be known here")
	case name == "sops":
		if x, ok := hasArg(c, func(s string) bool { return s == "-d" || s == "--decrypt" || s == "decrypt" }); ok {
			a.printsSecret(x.sp, "secrets decrypted by sops", "sops "+x.s+" prints the decrypted secrets")
		}
	case name == "ansible-vault":
		if x, ok := task(c, "view", "decrypt"); ok {
			a.printsSecret(x.sp, "an Ansible vault", "ansible-vault "+x.s+" reveals the vault's plaintext")
		}
	case name == "doppler":
		ops := operands(c, 1)
		if len(ops) > 0 && c.args[ops[0]].s == "secrets" {
			sub := ""
			if len(ops) > 1 {
				sub = c.args[ops[1]].s
			}
			if sub == "" || sub == "get" || sub == "download" {
				a.printsSecret(c.args[ops[0]].sp, "Doppler secrets", "doppler secrets prints secret values")
			}
		}
	case strings.HasPrefix(name, "docker-credential-"):
		if x, ok := task(c, "get"); ok {
			a.printsSecret(x.sp, "a registry password", name+" get prints the stored registry user name and password")
		}
	}
}

// awsSecrets: aws subcommands that print keys, tokens or secret values.
func (a *analyzer) awsSecrets(c *call) {
	if x, ok := hasArg(c, func(s string) bool {
		switch s {
		case "export-credentials", "get-federation-token", "get-secret-value", "batch-get-secret-value", "create-access-key",
			"get-token", "generate-db-auth-token", "decrypt", "get-login", "get-role-credentials":
			return true
		}
		return strings.HasPrefix(s, "assume-role")
	}); ok {
		a.printsSecret(x.sp, "AWS credentials", "aws "+x.s+" prints access keys, tokens or secret values")
		return
	}
	if x, ok := task(c, "get-parameter", "get-parameters", "get-parameters-by-path"); ok {
		if d, ok := flag(c, "--with-decryption"); ok {
			a.printsSecret(wordsSpan(x, d), "an SSM SecureString", "aws ssm "+x.s+" --with-decryption prints decrypted secret parameters")
		}
	}
}

// kubectlSecrets: get secret(s) with an output that shows the data,
// create token, view-secret, and exec … -- env.
func (a *analyzer) kubectlSecrets(c *call, name string) {
	if sp, ok := seq(c, "create", "token"); ok {
		a.printsSecret(sp, "a service-account token", name+" create token prints a new service-account token")
		return
	}
	if x, ok := task(c, "view-secret"); ok {
		a.printsSecret(x.sp, "a Kubernetes secret", name+" view-secret prints a secret's values")
		return
	}
	verb := -1
	for _, i := range operands(c, 1) {
		if s := c.args[i].s; s == "get" || s == "exec" {
			verb = i
			break
		}
	}
	if verb < 0 {
		return
	}
	if c.args[verb].s == "exec" {
		for i := verb + 1; i < len(c.args); i++ {
			if c.args[i].s == "--" {
				a.envDumpInside(c.args[i+1:], name+" exec")
				return
			}
		}
		return
	}
	var res arg
	secret := false
	for i := verb + 1; i < len(c.args) && !secret; i++ {
		x := c.args[i]
		if strings.HasPrefix(x.s, "-") {
			continue
		}
		for _, r := range strings.Split(x.s, ",") {
			k, _, _ := strings.Cut(r, "/")
			if k == "secret" || k == "secrets" || strings.HasPrefix(k, "secret.") {
				res, secret = x, true
			}
		}
	}
	if !secret {
		return
	}
	args := c.args
	for i := verb + 1; i < len(args); i++ {
		x := args[i]
		out := ""
		switch {
		case (x.s == "-o" || x.s == "--output") && i+1 < len(args):
			out = args[i+1].s
			x = arg{s: x.s, sp: wordsSpan(x, args[i+1])}
		case strings.HasPrefix(x.s, "--output="):
			out = x.s[len("--output="):]
		case strings.HasPrefix(x.s, "-o") && !strings.HasPrefix(x.s, "--"):
			out = strings.TrimPrefix(x.s[2:], "=")
		default:
			continue
		}
		out = strings.ToLower(out)
		for _, p := range [...]string{"yaml", "json", "jsonpath", "go-template", "template", "custom-columns"} {
			if strings.HasPrefix(out, p) {
				a.printsSecret(wordsSpan(res, x), "a Kubernetes secret", name+" get "+res.s+" with -o "+p+" prints the secret's values (base64 is no protection)")
				return
			}
		}
	}
}

// containerSecrets: docker inspect prints a container's environment;
// docker exec and compose exec running env, printenv or a read of
// /proc/*/environ print the container's secrets.
func (a *analyzer) containerSecrets(c *call, name string) {
	ops := operands(c, 1)
	if len(ops) == 0 {
		return
	}
	v := c.args[ops[0]]
	at := ops[0]
	if (v.s == "container" || v.s == "service" || v.s == "compose") && len(ops) > 1 {
		// docker container inspect, docker compose exec: the next word.
		for _, i := range ops[1:] {
			if s := c.args[i].s; s == "inspect" || s == "exec" {
				if v.s == "compose" && s == "inspect" {
					return
				}
				at, v = i, c.args[i]
				break
			}
		}
	}
	switch v.s {
	case "inspect":
		if f, ok := formatValue(c, at); ok && !revealsEnv(f) {
			return
		}
		a.printsSecret(v.sp, "a container's environment", name+" inspect prints the container's configuration, its environment variables and their secrets included")
	case "exec":
		// exec [options] CONTAINER COMMAND…
		valued := map[string]bool{"-e": true, "--env": true, "--env-file": true, "-u": true, "--user": true, "-w": true,
			"--workdir": true, "--detach-keys": true, "--index": true}
		i := at + 1
		for i < len(c.args) && strings.HasPrefix(c.args[i].s, "-") {
			if valued[c.args[i].s] {
				i++
			}
			i++
		}
		if i+1 < len(c.args) {
			a.envDumpInside(c.args[i+1:], name+" exec")
		}
	}
}

// formatValue returns the value of --format or -f after c.args[from].
func formatValue(c *call, from int) (string, bool) {
	for i := from + 1; i < len(c.args); i++ {
		s := c.args[i].s
		switch {
		case (s == "-f" || s == "--format") && i+1 < len(c.args):
			return c.args[i+1].s, true
		case strings.HasPrefix(s, "--format="):
			return s[len("--format="):], true
		}
	}
	return "", false
}

// revealsEnv reports a Go template for docker inspect that prints the
// environment: one naming Env or the whole Config, or the whole object.
func revealsEnv(f string) bool {
	t := strings.Join(strings.Fields(f), "")
	return strings.Contains(f, "Env") || strings.Contains(t, ".Config}}") || t == "json" || t == "{{json.}}" || t == "{{.}}" ||
		strings.Contains(t, ".Spec}}")
}

// envDumpInside judges the command a container or pod runs: env,
// printenv, set, export -p, a read of /proc/*/environ, or sh -c with one
// of those print its secrets.
func (a *analyzer) envDumpInside(cmd []arg, what string) {
	if len(cmd) == 0 || !envDumps(cmd, 0) {
		return
	}
	a.printsSecret(wordsSpan(cmd[0], cmd[len(cmd)-1]), "a container's environment", what+" runs "+quote(cmd[0].s)+" inside, which prints the container's environment and its secrets")
}

// envDumps reports a command, given as words, that prints the environment.
func envDumps(cmd []arg, depth int) bool {
	if len(cmd) == 0 || depth > 2 {
		return false
	}
	for _, x := range cmd {
		if strings.Contains(x.s, "/environ") {
			return true
		}
	}
	rest := cmd[1:]
	switch programName(cmd[0].s) {
	case "env":
		for _, x := range rest {
			if !strings.HasPrefix(x.s, "-") && !isAssignment(x.s) {
				return false // env runs a command
			}
		}
		return true
	case "printenv":
		return printenvDumps(rest)
	case "set", "export", "declare", "typeset":
		for _, x := range rest {
			if !strings.HasPrefix(x.s, "-") {
				return false
			}
		}
		return cmd[0].s == "set" && len(rest) == 0 || cmd[0].s != "set"
	case "sh", "bash", "ash", "dash", "zsh", "ksh", "busybox":
		for i, x := range rest {
			if strings.HasPrefix(x.s, "-") && strings.ContainsRune(x.s, 'c') && i+1 < len(rest) {
				code := rest[i+1].s
				if j := strings.IndexAny(code, "|;&"); j >= 0 {
					code = code[:j]
				}
				var words []arg
				for _, f := range strings.Fields(code) {
					words = append(words, arg{s: f})
				}
				return envDumps(words, depth+1)
			}
		}
	}
	return false
}

// printenvDumps reports whether printenv with these arguments prints a
// secret: without names it prints everything; with names, only those.
func printenvDumps(args []arg) (dump bool) {
	names := 0
	for _, x := range args {
		if strings.HasPrefix(x.s, "-") && !x.dyn {
			continue
		}
		names++
		if x.dyn || secretName(x.s) {
			return true
		}
	}
	return names == 0
}

// terraformSecrets: output -json and -raw NAME, show -json and state pull
// print sensitive values in clear text.
func (a *analyzer) terraformSecrets(c *call, name string) {
	vs := verbs(c)
	if len(vs) == 0 {
		return
	}
	v := vs[0]
	switch v.s {
	case "output":
		if x, ok := flag(c, "-json", "--json"); ok {
			a.printsSecret(wordsSpan(v, x), "Terraform outputs", name+" output -json prints sensitive outputs in clear text")
			return
		}
		if x, ok := flag(c, "-raw", "--raw"); ok {
			for _, y := range vs[1:] {
				if y.dyn || secretValueName(y.s) {
					a.printsSecret(wordsSpan(x, y), "a Terraform output", name+" output -raw "+y.s+" prints a secret output in clear text")
					return
				}
			}
		}
	case "show":
		if x, ok := flag(c, "-json", "--json"); ok {
			a.printsSecret(wordsSpan(v, x), "Terraform state", name+" show -json prints the state, sensitive values included")
		}
	case "state":
		if len(vs) > 1 && vs[1].s == "pull" {
			a.printsSecret(wordsSpan(v, vs[1]), "Terraform state", name+" state pull prints the raw state, every resource's secrets included")
		}
	}
}

// gitConfigSecrets: git config reading keys that hold tokens (an
// http.*.extraheader, url.*.insteadOf with a token in it, *.password,
// *.token) or listing the whole configuration.
func (a *analyzer) gitConfigSecrets(c *call) {
	i, _ := a.gitGlobal(c)
	if i >= len(c.args) || c.args[i].s != "config" {
		return
	}
	rest := c.args[i+1:]
	list, nameOnly, regexp, read := false, false, false, false
	var keys []arg
	for j := 0; j < len(rest); j++ {
		x := rest[j]
		switch x.s {
		case "-l", "--list", "list":
			list = true
			continue
		case "--name-only":
			nameOnly = true
			continue
		case "--get-regexp":
			regexp, read = true, true
			continue
		case "--get", "--get-all", "--get-urlmatch", "get":
			read = true
			continue
		case "-f", "--file", "--blob", "--type", "--default", "--comment", "--value":
			j++
			continue
		}
		if !strings.HasPrefix(x.s, "-") {
			keys = append(keys, x)
		}
	}
	if list && !nameOnly {
		a.printsSecret(c.sp, "git configuration", "git config --list prints every setting, the tokens of http.*.extraheader and of URLs included")
		return
	}
	if !read && len(keys) != 1 || len(keys) == 0 || nameOnly {
		return
	}
	k := keys[0]
	l := strings.ToLower(k.s)
	secret := strings.Contains(l, "extraheader") || strings.Contains(l, "insteadof") || strings.HasSuffix(l, ".password") ||
		strings.HasSuffix(l, "pass") || strings.HasSuffix(l, "token") || strings.HasSuffix(l, ".secret") || k.dyn
	if regexp && !secret {
		// A pattern that may match such keys: anything broad or about
		// http, urls, credentials or tokens.
		for _, p := range [...]string{"http", "url", "cred", "token", "pass", "header", "secret"} {
			if strings.Contains(l, p) {
				secret = true
			}
		}
		secret = secret || strings.Trim(l, ".*^$") == ""
	}
	if secret {
		a.printsSecret(k.sp, "git configuration", "git config prints "+quote(k.s)+", which holds an access token or password")
	}
}

// npmSecrets: npm config get of an auth setting, npm token create.
func (a *analyzer) npmSecrets(c *call, name string) {
	if sp, ok := seq(c, "token", "create"); ok {
		a.printsSecret(sp, "an npm token", name+" token create prints a new registry token")
		return
	}
	if x, ok := task(c, "get"); ok {
		if name == "yarn" {
			if _, raw := flag(c, "--no-redacted"); !raw {
				return // yarn masks secrets it prints
			}
		}
		for _, k := range operands(c, 1) {
			y := c.args[k]
			l := strings.ToLower(y.s)
			if y.s != "get" && y.s != "config" && (strings.Contains(l, "_auth") || strings.Contains(l, "token") || strings.Contains(l, "_password") || strings.Contains(l, "authtoken")) {
				a.printsSecret(wordsSpan(x, y), "a registry token", name+" config get "+y.s+" prints a registry auth token")
				return
			}
		}
	}
}

// findKeys: find -name PATTERN -exec READER, where the pattern names key
// or credential files, prints every key it finds.
func (a *analyzer) findKeys(c *call) {
	var pat arg
	found := false
	for i := 1; i+1 < len(c.args); i++ {
		switch c.args[i].s {
		case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename":
			if p := c.args[i+1]; !p.dyn && a.namesCredential(p.s) {
				pat, found = p, true
			}
		}
	}
	if !found {
		return
	}
	for i := 1; i+1 < len(c.args); i++ {
		switch c.args[i].s {
		case "-exec", "-execdir", "-ok", "-okdir":
			prog := programName(c.args[i+1].s)
			switch prog {
			case "ls", "stat", "file", "wc", "du", "chmod", "chown", "chgrp", "rm", "shred", "touch", "echo", "test", "basename",
				"dirname", "realpath", "readlink", "md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "cksum", "mv", "unlink":
				continue
			}
			a.printsSecret(wordsSpan(pat, c.args[i+1]), "key files found by name", "find "+pat.s+" hands every key or credential file it finds to "+quote(prog))
			return
		}
	}
}

// namesCredential reports a find name pattern that matches credential
// files: the pattern with its wildcards filled in is a credential path.
func (a *analyzer) namesCredential(pat string) bool {
	r := strings.NewReplacer("*", "x", "?", "x")
	s := r.Replace(pat)
	if i := strings.IndexByte(s, '['); i >= 0 {
		if j := strings.IndexByte(s[i:], ']'); j > 0 {
			s = s[:i] + "x" + s[i+j+1:]
		}
	}
	s = strings.TrimPrefix(s, "./")
	if s == "" || a.env.Home == "" {
		return false
	}
	return a.isCredential(cleanAbs(a.env.Home+"/"+s), false)
}

// grepKeys: a search for the text of private keys or token formats prints
// the keys it finds (grep -r 'BEGIN RSA PRIVATE KEY', rg 'AKIA…').
func (a *analyzer) grepKeys(c *call, name string) {
	for _, x := range c.args[1:] {
		if x.s == "-q" || x.s == "--quiet" || x.s == "-c" || x.s == "--count" {
			return
		}
	}
	for _, x := range c.args[1:] {
		if keyMaterial(x.s) {
			a.printsSecret(x.sp, "key material found by pattern", name+" searches for "+quote(x.s)+", the text of private keys or tokens, and prints what it finds")
			return
		}
	}
}

// keyMaterial reports a search pattern for private keys or token formats.
func keyMaterial(s string) bool {
	u := strings.ToUpper(s)
	for _, m := range [...]string{"PRIVATE KEY", "BEGIN RSA", "BEGIN OPENSSH", "BEGIN DSA", "BEGIN EC ", "BEGIN PGP PRIVATE",
		"BEGIN ENCRYPTED", "AWS_SECRET_ACCESS_KEY"} {
		if strings.Contains(u, m) {
			return true
		}
	}
	if strings.Contains(s, "-----BEGIN") {
		return true
	}
	// A token's prefix followed by a regular expression for the rest
	// (AKIA[0-9A-Z]{16}, ghp_[A-Za-z0-9]{36}) matches whole tokens; the
	// prefix alone (grep -rn AKIA src/) is a search for where code
	// mentions them.
	for _, m := range [...]string{"AKIA", "ASIA", "ghp_", "gho_", "ghs_", "github_pat_", "glpat-", "xoxb-", "xoxp-", "xox",
		"sk_live_", "sk-proj-", "sk-ant-", "sk-", "AIza", "npm_"} {
		if i := strings.Index(s, m); i >= 0 && i+len(m) < len(s) && strings.IndexByte("[\\.({", s[i+len(m)]) >= 0 {
			return true
		}
	}
	return false
}
