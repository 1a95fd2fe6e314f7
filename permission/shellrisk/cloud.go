package shellrisk

import (
	"strings"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// verbs returns the operands of a call (words not starting with -), skipping
// the values of options written as separate words when known.
func verbs(c *call) []arg {
	var out []arg
	for _, x := range c.args[1:] {
		if !strings.HasPrefix(x.s, "-") {
			out = append(out, x)
		}
	}
	return out
}

// firstVerb returns the first operand that is one of the known verbs; the
// values of options written as separate words cannot then be taken for one.
func firstVerb(c *call, known ...string) string {
	for _, x := range c.args[1:] {
		for _, k := range known {
			if x.s == k {
				return k
			}
		}
	}
	return ""
}

func hasArg(c *call, pred func(string) bool) (arg, bool) {
	for _, x := range c.args[1:] {
		if pred(x.s) {
			return x, true
		}
	}
	return arg{}, false
}

// ruleKubectl: the cluster is remote; deleting and draining destroy.
func ruleKubectl(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	a.network(c.sp, quote(name), name+" talks to a Kubernetes cluster over the network")
	v := firstVerb(c, "config", "delete", "drain", "cordon", "taint", "uncordon", "replace", "apply", "patch", "rollout", "set",
		"edit", "label", "annotate", "create", "run", "expose", "autoscale", "scale", "exec", "attach", "debug", "cp",
		"port-forward", "proxy")
	switch v {
	case "config":
		if _, ok := hasArg(c, func(s string) bool { return s == "--raw" || s == "--flatten" }); ok {
			a.credSource(c.sp, "cluster credentials")
			a.find(risk.Credential, c.sp, name+" config view --raw prints the cluster's credentials")
		}
	case "delete", "drain", "cordon", "taint", "uncordon":
		if _, dry := hasArg(c, func(s string) bool { return strings.HasPrefix(s, "--dry-run") && s != "--dry-run=none" }); dry {
			return
		}
		a.find(risk.Destructive, c.sp, name+" "+v+" removes or disrupts workloads in the cluster")
	case "replace", "apply", "patch", "rollout", "set", "edit", "label", "annotate", "create", "run", "expose", "autoscale":
		if _, ok := hasArg(c, func(s string) bool { return s == "--force" || strings.HasPrefix(s, "--prune") }); ok {
			a.find(risk.Destructive, c.sp, name+" "+v+" --force or --prune deletes and recreates resources")
		}
	case "scale":
		if x, ok := hasArg(c, func(s string) bool { return s == "--replicas=0" }); ok {
			a.find(risk.Destructive, x.sp, name+" scale --replicas=0 stops every instance of the workload")
		}
	case "exec", "attach", "debug", "cp", "port-forward", "proxy":
		a.find(risk.Execute, c.sp, name+" "+v+" runs commands in or opens a channel into the cluster")
	}
}

// ruleHelm: uninstalling and rolling back releases destroys state.
func ruleHelm(a *analyzer, c *call) {
	if helmLocal(c) {
		return // renders or checks a local chart (issue 9 §5)
	}
	a.network(c.sp, "`helm`", "helm talks to a Kubernetes cluster and chart repositories over the network")
	switch v := firstVerb(c, "uninstall", "delete", "del", "un", "rollback", "upgrade", "install"); v {
	case "uninstall", "delete", "del", "un", "rollback":
		a.find(risk.Destructive, c.sp, "helm "+v+" removes or reverts a release in the cluster")
	case "upgrade", "install":
		if _, ok := hasArg(c, func(s string) bool { return s == "--force" || s == "--reset-values" }); ok {
			a.find(risk.Destructive, c.sp, "helm "+v+" --force recreates resources in the cluster")
		}
	}
}

// ruleTerraform: destroy, unattended apply and state surgery.
func ruleTerraform(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	vs := verbs(c)
	if len(vs) > 0 && (vs[0].s == "validate" || vs[0].s == "fmt") {
		return // checks and formats local files (issue 9 §5)
	}
	a.network(c.sp, quote(name), name+" talks to cloud providers over the network")
	if len(vs) == 0 {
		return
	}
	v := vs[0].s
	switch v {
	case "destroy":
		a.find(risk.Destructive, c.sp, name+" destroy deletes the infrastructure it manages")
	case "apply":
		if x, ok := hasArg(c, func(s string) bool {
			return s == "-destroy" || s == "--destroy" || s == "-auto-approve" || s == "--auto-approve"
		}); ok {
			a.find(risk.Destructive, x.sp, name+" apply "+x.s+" changes or deletes infrastructure without asking")
		} else {
			a.find(risk.Destructive, c.sp, name+" apply changes real infrastructure and may delete resources")
		}
	case "state", "workspace", "force-unlock", "taint", "import":
		if len(vs) > 1 && (vs[1].s == "rm" || vs[1].s == "mv" || vs[1].s == "push" || vs[1].s == "delete" || vs[1].s == "replace-provider") || v == "force-unlock" || v == "taint" {
			a.find(risk.Destructive, c.sp, name+" "+v+" rewrites the recorded state of the infrastructure")
		}
	}
}

// ruleDocker: removing containers, images and volumes; privileged runs.
func ruleDocker(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	vs := verbs(c)
	if len(vs) == 0 {
		return
	}
	v := vs[0].s
	obj := ""
	if len(vs) > 1 {
		obj = vs[1].s
	}
	switch {
	case v == "rm" || v == "rmi" || v == "kill" || v == "prune" || obj == "rm" || obj == "prune" || obj == "remove" || obj == "kill":
		a.find(risk.Destructive, c.sp, name+" "+v+" deletes containers, images, volumes or networks")
	case v == "compose" && (obj == "down" || obj == "rm"):
		if _, ok := hasArg(c, func(s string) bool {
			return s == "-v" || s == "--volumes" || strings.HasPrefix(s, "--rmi") || obj == "rm"
		}); ok {
			a.find(risk.Destructive, c.sp, name+" compose "+obj+" deletes containers together with their volumes or images")
		}
	case v == "push" || v == "login":
		a.network(c.sp, quote(name+" "+v), name+" "+v+" sends data to a registry")
	case v == "pull" || v == "build" || v == "search":
		a.network(c.sp, quote(name+" "+v), name+" "+v+" downloads images over the network")
	case v == "compose" && composeLocal(obj):
		// compose ps, logs, config …: the local daemon, no network.
	case v == "run" || v == "create" || v == "exec" || v == "compose":
		a.dockerRun(c, name, v)
	}
}

// dockerRun judges options that give a container power over the host.
func (a *analyzer) dockerRun(c *call, name, v string) {
	a.network(c.sp, quote(name+" "+v), name+" "+v+" may pull images and gives the container network access")
	args := c.args
	for i := 1; i < len(args); i++ {
		s := args[i].s
		switch {
		case s == "--privileged" || strings.HasPrefix(s, "--cap-add") || s == "--pid=host" || s == "--pid" ||
			s == "--ipc=host" || s == "--userns=host" || strings.HasPrefix(s, "--security-opt") || strings.HasPrefix(s, "--device"):
			a.find(risk.Execute, args[i].sp, name+" "+s+" gives the container power over the host")
		case s == "-v" || s == "--volume" || s == "--mount" || strings.HasPrefix(s, "--volume=") || strings.HasPrefix(s, "--mount="):
			spec := ""
			sp := args[i].sp
			if k, val, ok := strings.Cut(s, "="); ok && strings.HasPrefix(k, "--") {
				spec = val
			} else if i+1 < len(args) {
				i++
				spec, sp = args[i].s, args[i].sp
			}
			a.dockerMount(c, spec, sp, args[i].dyn)
		}
	}
}

// dockerMount records a bind mount's host path as a write: the container
// can change what it mounts.
func (a *analyzer) dockerMount(c *call, spec string, sp risk.Span, dyn bool) {
	host := ""
	if strings.Contains(spec, "source=") || strings.Contains(spec, "src=") {
		for _, kv := range strings.Split(spec, ",") {
			if k, v, ok := strings.Cut(kv, "="); ok && (k == "source" || k == "src") {
				host = v
			}
		}
	} else if h, _, ok := strings.Cut(spec, ":"); ok {
		host = h
	}
	if host == "" || !(strings.HasPrefix(host, "/") || strings.HasPrefix(host, ".") || strings.HasPrefix(host, "~")) {
		return // a named volume
	}
	a.access(arg{s: host, dyn: dyn, sp: sp}, c.cwd, true, false)
	a.find(risk.Execute, sp, "the container can read and change the host directory "+quote(host))
}

// ruleCloud: cloud CLIs talk to the network; verbs that delete destroy.
func ruleCloud(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	a.network(c.sp, quote(name), name+" talks to a cloud provider over the network")
	if printsToken(c) {
		a.credSource(c.sp, "a cloud token")
		a.find(risk.Credential, c.sp, name+" prints an access token or secret")
	}
	for i, x := range c.args[1:] {
		// Local files a CLI uploads (gh gist create f, aws s3 cp f s3://..., --body-file f).
		prev := c.args[i].s
		if !x.dyn && (strings.HasPrefix(x.s, "/") || strings.HasPrefix(x.s, ".") || strings.HasPrefix(x.s, "~") ||
			looksLikePath(x.s) && !strings.Contains(x.s, "://") || strings.HasSuffix(prev, "-file") || prev == "-F") {
			a.access(x, c.cwd, false, false)
		}
	}
	for _, x := range verbs(c) {
		if isDestroyVerb(x.s) {
			a.find(risk.Destructive, x.sp, name+" "+x.s+" deletes cloud resources or data")
			return
		}
	}
	if x, ok := hasArg(c, func(s string) bool { return s == "--delete" || s == "--delete-removed" }); ok {
		a.find(risk.Destructive, x.sp, name+" sync "+x.s+" deletes files at the destination")
	}
}

func isDestroyVerb(s string) bool {
	switch s {
	case "rm", "rb", "delete", "destroy", "remove", "terminate", "purge", "wipe", "drop", "uninstall", "mv", "apps:destroy", "down":
		return true
	}
	for _, p := range [...]string{"delete-", "terminate-", "remove-", "deregister-", "purge-", "destroy", "disable-"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return strings.HasSuffix(s, ":delete") || strings.HasSuffix(s, ":destroy") || strings.HasSuffix(s, ":disable")
}

// ruleRsync: --delete removes files at the destination, -e runs a program,
// host:path goes over the network.
func ruleRsync(a *analyzer, c *call) {
	os, ops := a.scan(opts{short: "eBfT", long: []string{"rsh", "rsync-path", "filter", "exclude", "include", "exclude-from", "include-from",
		"files-from", "temp-dir", "compare-dest", "copy-dest", "link-dest", "backup-dir", "suffix", "chmod", "chown", "log-file", "password-file", "partial-dir"}}, c.args)
	for _, o := range os {
		switch {
		case strings.HasPrefix(o.name, "--del") || o.name == "--remove-source-files":
			a.find(risk.Destructive, o.x.sp, "rsync "+o.name+" deletes files, which cannot be undone")
		case o.name == "-e" || o.name == "--rsh" || o.name == "--rsync-path":
			a.find(risk.Execute, o.x.sp, "rsync "+o.name+" runs the given program")
			a.runValue(o.val, "rsync "+o.name, false)
		}
	}
	deep := has(os, "-r", "-a", "--recursive", "--archive") || hasPrefixOpt(os, "--recur") || hasPrefixOpt(os, "--arch")
	if f, ok := val(os, "--files-from"); ok && f.s != "-" {
		a.access(f, c.cwd, false, false)
	}
	for i, x := range ops {
		if isRemote(x.s) || strings.HasPrefix(x.s, "rsync://") {
			a.network(x.sp, "rsync", "rsync copies to or from another machine over the network")
			continue
		}
		write := i == len(ops)-1 && len(ops) > 1
		if deep && !write {
			a.accessDeep(x, c.cwd)
			continue
		}
		a.access(x, c.cwd, write, false)
	}
}

// ruleCrontab: installing a crontab persists code; -r deletes it.
func ruleCrontab(a *analyzer, c *call) {
	os, ops := a.scan(opts{short: "u"}, c.args)
	switch {
	case has(os, "-r"):
		a.find(risk.Destructive, c.sp, "crontab -r deletes every scheduled job of the user")
	case has(os, "-l"):
	case has(os, "-e") || len(ops) > 0 || c.in.kind != inNone:
		for _, x := range ops {
			a.access(x, c.cwd, false, false)
		}
		a.find(risk.Execute, c.sp, "crontab installs jobs that run code later, on a schedule")
		if c.in.kind == inPipe || len(ops) > 0 && ops[0].s == "-" {
			a.res.Opaque = true
		}
	}
}

// printsToken reports CLI calls that print credentials: gh auth token,
// gcloud auth print-access-token, aws configure get, az account get-access-token.
func printsToken(c *call) bool {
	for _, x := range c.args[1:] {
		switch x.s {
		case "token", "print-access-token", "print-identity-token", "get-access-token", "get-login-password",
			"get-session-token", "get-authorization-token":
			return true
		case "get":
			// aws configure get KEY: the keys and tokens, not the region
			// or output format.
			if firstVerb(c, "configure") != "" {
				for _, y := range c.args[1:] {
					if l := strings.ToLower(y.s); y.dyn || strings.Contains(l, "secret") || strings.Contains(l, "token") || strings.Contains(l, "key") {
						return true
					}
				}
			}
		}
	}
	return false
}

// ruleSecretStore: password managers and keychains print secrets.
func ruleSecretStore(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	for _, x := range c.args[1:] {
		switch x.s {
		case "find-generic-password", "find-internet-password", "dump-keychain", "lookup", "show", "read", "get",
			"item", "export", "cat", "kv", "unlock":
			a.credSource(c.sp, "a password store")
			a.find(risk.Credential, c.sp, name+" "+x.s+" reads secrets from a password store")
			return
		}
	}
	if name == "pass" || name == "gopass" {
		a.credSource(c.sp, "a password store")
		a.find(risk.Credential, c.sp, name+" prints secrets from the password store")
	}
}

// ruleFd: fd -x/--exec and -X/--exec-batch run a command on each match.
func ruleFd(a *analyzer, c *call) {
	for i, x := range c.args {
		if x.s == "-x" || x.s == "--exec" || x.s == "-X" || x.s == "--exec-batch" {
			end := i + 1
			for end < len(c.args) && c.args[end].s != ";" {
				end++
			}
			a.inner(c, markDyn(c.args[i+1:end], "{"), c.cwd, true)
			return
		}
	}
}
