package shellrisk

import (
	"strings"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// Destruction without rm (issue 9 §4): programs that delete data by a verb
// of their own. ORM and migration tools that reset or drop the database
// (prisma, Django, Rails, Laravel, Ecto, EF Core, alembic, knex, sequelize,
// typeorm, flyway, liquibase, supabase), database clients and servers'
// tools (dropdb, mysqladmin drop, SQL whose WHERE always holds, redis,
// Elasticsearch's HTTP DELETE, mongorestore --drop, pg_restore --clean),
// infrastructure teardown (cdk, serverless, terragrunt run-all, KMS key
// deletion, rclone purge and sync), volumes (lvremove, zfs destroy, btrfs
// subvolume delete), sed -i scripts that empty files, and recursive
// permission changes on system directories. Each finding's span is the
// words that destroy ("migrate reset", "-X DELETE"), so the person asked
// sees what does it.
//
// Rules for programs that have a rule already (docker, terraform, the
// cloud CLIs, git, sed, chmod, curl, …) add to it: after their own
// findings they hand the call on to what the program would get without
// this file (then), so nothing the general rule or another class judges is
// lost. Secrets printed by tools are in printsecrets.go.

// ruleForDestroy returns the rule for a program of this file's class, or nil:
// destruction without rm (ORM and migration resets, database drops, infrastructure teardown, volumes) and secrets printed by tools.
// ruleFor consults it before its own table, so a rule returned here
// replaces the general one for that program.
func ruleForDestroy(name string) rule {
	switch name {
	case "prisma", "manage.py", "django-admin", "artisan", "sail", "rails", "rake", "alembic", "knex", "sequelize",
		"sequelize-cli", "typeorm", "typeorm-ts-node-commonjs", "typeorm-ts-node-esm", "flyway", "liquibase", "supabase",
		"dropdb", "dropuser", "mysqladmin", "mongorestore", "pg_restore", "cdk", "serverless", "sls", "lvremove",
		"vgremove", "pvremove", "zfs", "zpool", "btrfs", "cryptsetup", "azcopy", "docker-compose", "fly":
		return ruleDestroyTool
	case "history", "fc", "sops", "ansible-vault", "doppler":
		return rulePrintsSecret
	case "mix", "dotnet", "docker", "podman", "nerdctl", "terraform", "tofu", "terragrunt", "kubectl", "oc",
		"gh", "glab", "aws", "gcloud", "gsutil", "az", "doctl", "flyctl", "heroku", "vercel", "netlify", "firebase",
		"pulumi", "rclone", "s3cmd", "curl", "wget", "http", "https", "xh", "sed", "gsed", "chmod", "chown", "chgrp",
		"git", "npm", "pnpm", "yarn", "gpg", "gpg2", "find", "grep", "egrep", "fgrep", "rg", "ripgrep", "vault":
		return ruleThen
	}
	if strings.HasPrefix(name, "docker-credential-") {
		return rulePrintsSecret
	}
	if strings.HasPrefix(name, "python") || strings.HasPrefix(name, "php") {
		return ruleThen
	}
	return nil
}

// baseRule is the rule ruleFor's own table gives each program ruleThen
// handles: what it would run without this file and the other classes.
func baseRule(name string) rule {
	switch name {
	case "docker", "podman", "nerdctl":
		return ruleDocker
	case "terraform", "tofu", "terragrunt":
		return ruleTerraform
	case "kubectl", "oc":
		return ruleKubectl
	case "gh", "glab", "aws", "gcloud", "gsutil", "az", "doctl", "flyctl", "heroku", "vercel", "netlify", "firebase", "pulumi":
		return ruleCloud
	case "sed", "gsed":
		return ruleSed
	case "chmod", "chown", "chgrp":
		return ruleChmod
	case "git":
		return ruleGit
	case "gpg":
		return ruleDecode
	case "find":
		return ruleFind
	case "rg", "ripgrep":
		return ruleRg
	case "grep", "egrep", "fgrep":
		return ruleRead
	case "vault":
		return ruleSecretStore
	}
	if r := networkRule(name); r != nil {
		return r
	}
	return interpreterRule(name)
}

// then runs the rule the program has without this file: another class's
// rule if one claims it, else the general one.
func (a *analyzer) then(c *call, name string) {
	for _, f := range [...]func(string) rule{ruleForLang, ruleForSideDoor, ruleForBuild} {
		if r := f(name); r != nil {
			r(a, c)
			return
		}
	}
	if r := baseRule(name); r != nil {
		r(a, c)
	}
}

// ruleThen adds this file's findings to a program's own rule.
func ruleThen(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	a.destroyExtra(c, name)
	a.secretsExtra(c, name)
	a.then(c, name)
}

// wordsSpan is the span from x to y, two words of one command.
func wordsSpan(x, y arg) risk.Span {
	if y.sp.End < x.sp.Start || y.sp.Start < x.sp.Start {
		return x.sp
	}
	return risk.Span{Start: x.sp.Start, End: y.sp.End}
}

// operands returns the words of a call after args[from] that do not start
// with "-", with their index in c.args.
func operands(c *call, from int) []int { return appendOperands(nil, c, from) }

// appendOperands is operands appending to out.
func appendOperands(out []int, c *call, from int) []int {
	for i := from; i < len(c.args); i++ {
		if !strings.HasPrefix(c.args[i].s, "-") {
			out = append(out, i)
		}
	}
	return out
}

// seq finds the words w[0] w[1] … as consecutive operands of c (options may
// stand between them) and returns the span from the first to the last.
func seq(c *call, w ...string) (risk.Span, bool) {
	var buf [16]int // on the stack: most commands have fewer operands
	ops := appendOperands(buf[:0], c, 1)
	for k := 0; k+len(w) <= len(ops); k++ {
		ok := true
		for j, s := range w {
			if c.args[ops[k+j]].s != s {
				ok = false
				break
			}
		}
		if ok {
			return wordsSpan(c.args[ops[k]], c.args[ops[k+len(w)-1]]), true
		}
	}
	return risk.Span{}, false
}

// flag returns the first word of c that is one of the options.
func flag(c *call, names ...string) (arg, bool) {
	for _, x := range c.args[1:] {
		if x.s == "--" {
			break
		}
		for _, n := range names {
			if x.s == n || strings.HasPrefix(x.s, n+"=") {
				return x, true
			}
		}
	}
	return arg{}, false
}

// task finds the first word of c in the set.
func task(c *call, set ...string) (arg, bool) {
	for _, x := range c.args[1:] {
		for _, s := range set {
			if x.s == s {
				return x, true
			}
		}
	}
	return arg{}, false
}

// ormTasks are the commands of migration tools (Rails and rake, Laravel's
// artisan, knex, sequelize, typeorm, Ecto's mix tasks) that drop the
// database, empty its tables or revert migrations, which drops what they
// created.
var ormTasks = lazy[map[string][]string]{build: func() map[string][]string {
	return map[string][]string{
		"rails": {"db:drop", "db:drop:all", "db:reset", "db:schema:load", "db:structure:load", "db:purge", "db:purge:all",
			"db:truncate_all", "db:migrate:reset", "db:seed:replant", "db:rollback", "db:migrate:down", "destroy"},
		"artisan":   {"migrate:fresh", "migrate:reset", "migrate:refresh", "migrate:rollback", "db:wipe"},
		"knex":      {"migrate:rollback", "migrate:down"},
		"sequelize": {"db:drop", "db:migrate:undo", "db:migrate:undo:all", "db:seed:undo", "db:seed:undo:all"},
		"typeorm":   {"schema:drop", "migration:revert"},
		"mix":       {"ecto.drop", "ecto.reset", "ecto.rollback"},
	}
}}

// ormTask reports a destroying task of tool among the words of c.
func (a *analyzer) ormTask(c *call, tool, what string) bool {
	x, ok := task(c, ormTasks.get()[tool]...)
	if !ok {
		return false
	}
	a.find(risk.Destructive, x.sp, what+" "+x.s+" drops or empties database tables, or reverts migrations that created them: the data is lost")
	return true
}

// ruleDestroyTool judges programs of this class that have no other rule.
func ruleDestroyTool(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	destroy := func(sp risk.Span, why string) { a.find(risk.Destructive, sp, why) }
	switch name {
	case "prisma":
		if sp, ok := seq(c, "migrate", "reset"); ok {
			destroy(sp, "prisma migrate reset drops the database and re-applies the migrations: every row is lost")
		} else if x, ok := flag(c, "--force-reset", "--accept-data-loss"); ok && firstVerb(c, "push") != "" {
			destroy(x.sp, "prisma db push "+x.s+" drops the database or the columns and tables the schema no longer has")
		}
	case "manage.py", "django-admin":
		a.django(c, 1, name)
	case "artisan":
		a.ormTask(c, "artisan", "artisan")
	case "sail":
		if len(c.args) > 1 && (c.args[1].s == "artisan" || c.args[1].s == "art" || c.args[1].s == "php") {
			a.ormTask(c, "artisan", "sail artisan")
		}
	case "rails", "rake":
		a.ormTask(c, "rails", name)
	case "knex":
		a.ormTask(c, "knex", name)
	case "sequelize", "sequelize-cli":
		a.ormTask(c, "sequelize", name)
	case "typeorm", "typeorm-ts-node-commonjs", "typeorm-ts-node-esm":
		a.ormTask(c, "typeorm", "typeorm")
	case "alembic":
		if x, ok := task(c, "downgrade"); ok {
			destroy(x.sp, "alembic downgrade reverts schema revisions, dropping the columns and tables they added")
		}
	case "flyway":
		if x, ok := task(c, "clean"); ok {
			destroy(x.sp, "flyway clean drops every object in the configured schemas")
		}
	case "liquibase":
		for _, x := range c.args[1:] {
			s := strings.ToLower(x.s)
			if s == "dropall" || s == "drop-all" || strings.HasPrefix(s, "rollback") {
				destroy(x.sp, "liquibase "+x.s+" drops database objects")
				break
			}
		}
	case "supabase":
		if _, ok := flag(c, "--linked", "--db-url"); ok {
			a.network(c.sp, "`supabase`", "supabase talks to a remote project's database")
		}
		if sp, ok := seq(c, "db", "reset"); ok {
			destroy(sp, "supabase db reset recreates the database: its data is lost")
		} else if x, ok := task(c, "delete"); ok {
			destroy(x.sp, "supabase "+x.s+" deletes a project's resources")
		}
	case "dropdb", "dropuser":
		a.network(c.sp, quote(name), name+" connects to a database server")
		destroy(c.sp, name+" drops a PostgreSQL "+strings.TrimPrefix(name, "drop")+", which cannot be undone")
	case "mysqladmin":
		a.network(c.sp, "`mysqladmin`", "mysqladmin connects to a database server")
		if x, ok := task(c, "drop", "shutdown"); ok {
			destroy(x.sp, "mysqladmin "+x.s+" drops a database or stops the server")
		}
	case "mongorestore":
		a.network(c.sp, "`mongorestore`", "mongorestore connects to a database server")
		if x, ok := flag(c, "--drop"); ok {
			destroy(x.sp, "mongorestore --drop drops each collection before restoring it")
		}
	case "pg_restore":
		os, _ := a.scan(opts{short: "dfFIjLnNPStTUhp", long: []string{"dbname", "file", "format", "index", "jobs", "use-list",
			"schema", "exclude-schema", "superuser", "table", "trigger", "username", "host", "port", "role"}}, c.args)
		for _, o := range os {
			if o.name == "-c" || o.name == "--clean" {
				destroy(o.x.sp, "pg_restore --clean drops the database objects before recreating them")
				break
			}
		}
	case "cdk":
		if x, ok := task(c, "destroy"); ok {
			a.network(c.sp, "`cdk`", "cdk talks to the cloud provider")
			destroy(x.sp, "cdk destroy deletes the stacks and their resources")
		} else if _, ok := task(c, "deploy", "bootstrap", "diff", "import", "watch", "drift"); ok {
			a.network(c.sp, "`cdk`", "cdk talks to the cloud provider")
		}
	case "serverless", "sls":
		a.network(c.sp, quote(name), name+" talks to the cloud provider")
		if x, ok := task(c, "remove"); ok {
			destroy(x.sp, name+" remove deletes the deployed service and its resources")
		}
	case "lvremove", "vgremove", "pvremove":
		destroy(c.sp, name+" deletes LVM volumes and the data on them")
	case "zfs", "zpool":
		if x, ok := task(c, "destroy", "rollback", "labelclear"); ok {
			destroy(x.sp, name+" "+x.s+" deletes datasets, snapshots or pools and their data")
		}
	case "btrfs":
		ops := operands(c, 1)
		if len(ops) >= 2 {
			g, v := c.args[ops[0]], c.args[ops[1]]
			if len(g.s) >= 3 && strings.HasPrefix("subvolume", g.s) && len(v.s) >= 3 && strings.HasPrefix("delete", v.s) {
				destroy(wordsSpan(g, v), "btrfs subvolume delete deletes the subvolume and every file in it")
			}
		}
	case "cryptsetup":
		if x, ok := task(c, "luksErase", "erase", "luksFormat", "luksKillSlot", "luksRemoveKey"); ok {
			destroy(x.sp, "cryptsetup "+x.s+" destroys key slots or the volume header: the data can no longer be opened")
		}
	case "azcopy":
		a.network(c.sp, "`azcopy`", "azcopy copies to or from cloud storage")
		if x, ok := task(c, "remove", "rm"); ok {
			destroy(x.sp, "azcopy remove deletes files in cloud storage")
		} else if x, ok := flag(c, "--delete-destination"); ok && !strings.HasSuffix(x.s, "=false") {
			destroy(x.sp, "azcopy sync --delete-destination deletes files at the destination")
		}
	case "docker-compose":
		// docker-compose X is docker compose X.
		args := make([]arg, 0, len(c.args)+1)
		args = append(args, arg{s: "docker", sp: c.args[0].sp}, arg{s: "compose", sp: c.args[0].sp})
		args = append(args, c.args[1:]...)
		ruleThen(a, a.newCall(call{args: args, sp: c.sp, in: c.in, cwd: c.cwd, dyn: c.dyn}))
	case "fly":
		ruleCloud(a, c)
	}
}

// django judges manage.py and django-admin; the command is the first
// operand at or after from.
func (a *analyzer) django(c *call, from int, what string) {
	ops := operands(c, from)
	if len(ops) == 0 {
		return
	}
	x := c.args[ops[0]]
	switch x.s {
	case "flush", "reset_db", "reset_schema", "drop_test_database", "reset":
		a.find(risk.Destructive, x.sp, what+" "+x.s+" deletes every row of the database or drops it")
	case "migrate":
		if len(ops) >= 3 && c.args[ops[2]].s == "zero" {
			a.find(risk.Destructive, wordsSpan(x, c.args[ops[2]]), what+" migrate APP zero unapplies every migration of the app, dropping its tables")
		}
	}
}

// destroyExtra adds this file's destruction findings for programs that
// have a rule of their own.
func (a *analyzer) destroyExtra(c *call, name string) {
	switch {
	case strings.HasPrefix(name, "python"):
		// python manage.py CMD, python -m django CMD
		for i := 1; i < len(c.args); i++ {
			x := c.args[i]
			if x.s == "-m" && i+1 < len(c.args) && c.args[i+1].s == "django" {
				a.django(c, i+2, "django")
				return
			}
			if strings.HasPrefix(x.s, "-") {
				continue
			}
			if base := programName(x.s); base == "manage.py" || base == "django-admin" {
				a.django(c, i+1, "manage.py")
			}
			return
		}
	case strings.HasPrefix(name, "php"):
		for i := 1; i < len(c.args); i++ {
			if strings.HasPrefix(c.args[i].s, "-") {
				continue
			}
			if programName(c.args[i].s) == "artisan" {
				a.ormTask(c, "artisan", "artisan")
			}
			return
		}
	}
	switch name {
	case "mix":
		a.ormTask(c, "mix", "mix")
	case "dotnet":
		if sp, ok := seq(c, "ef", "database", "drop"); ok {
			a.find(risk.Destructive, sp, "dotnet ef database drop deletes the database")
		} else if sp, ok := seq(c, "ef", "database", "update", "0"); ok {
			a.find(risk.Destructive, sp, "dotnet ef database update 0 reverts every migration, dropping the schema")
		}
	case "terragrunt":
		for _, w := range [][]string{{"run-all", "destroy"}, {"destroy-all"}, {"run", "destroy"}} {
			if sp, ok := seq(c, w...); ok {
				a.find(risk.Destructive, sp, "terragrunt "+strings.Join(w, " ")+" destroys the infrastructure of every module it runs in")
				break
			}
		}
	case "aws":
		if x, ok := hasArg(c, func(s string) bool { return s == "schedule-key-deletion" || strings.HasPrefix(s, "batch-delete-") }); ok {
			a.find(risk.Destructive, x.sp, "aws "+x.s+" deletes keys or resources; data encrypted under a deleted key is lost")
		}
	case "heroku":
		if x, ok := task(c, "pg:reset", "redis:reset", "pg:killall"); ok {
			a.find(risk.Destructive, x.sp, "heroku "+x.s+" deletes every row of the database")
		}
	case "firebase":
		if x, ok := hasArg(c, func(s string) bool { return strings.HasSuffix(s, ":remove") }); ok {
			a.find(risk.Destructive, x.sp, "firebase "+x.s+" deletes data")
		}
	case "gh", "glab":
		a.httpDelete(c, name)
	case "rclone":
		// The subcommand is the first operand.
		if ops := operands(c, 1); len(ops) > 0 {
			switch x := c.args[ops[0]]; x.s {
			case "purge", "delete", "deletefile", "rmdir", "rmdirs", "cleanup", "dedupe", "sync":
				a.find(risk.Destructive, x.sp, "rclone "+x.s+" deletes files at the destination, which cannot be undone")
			}
		}
	case "s3cmd":
		if x, ok := task(c, "del", "rm", "rb", "delete"); ok {
			a.find(risk.Destructive, x.sp, "s3cmd "+x.s+" deletes objects or buckets")
		} else if x, ok := flag(c, "--delete-removed", "--delete-after"); ok {
			a.find(risk.Destructive, x.sp, "s3cmd sync "+x.s+" deletes objects at the destination")
		}
	case "gsutil":
		if _, ok := task(c, "rsync"); ok {
			if x, ok := flag(c, "-d"); ok {
				a.find(risk.Destructive, x.sp, "gsutil rsync -d deletes destination files that the source lacks")
			}
		}
	case "docker", "podman", "nerdctl":
		if sp, ok := seq(c, "system", "reset"); ok {
			a.find(risk.Destructive, sp, name+" system reset deletes every container, image and volume")
		}
	case "curl", "wget", "http", "https", "xh":
		a.httpDelete(c, name)
	case "sed", "gsed":
		a.sedEmpties(c)
	case "chmod", "chown", "chgrp":
		a.chmodWide(c, name)
	}
}

// httpDelete finds an HTTP DELETE (curl -X DELETE, wget --method=DELETE,
// httpie's DELETE, gh api -X DELETE) and Elasticsearch's _delete_by_query.
func (a *analyzer) httpDelete(c *call, name string) {
	args := c.args
	var method arg
	found := false
	for i := 1; i < len(args) && !found; i++ {
		x := args[i]
		s := x.s
		switch {
		case (s == "-X" || s == "--request" || s == "--method") && i+1 < len(args):
			if strings.EqualFold(args[i+1].s, "DELETE") {
				method, found = arg{s: s + " " + args[i+1].s, sp: wordsSpan(x, args[i+1])}, true
			}
		case strings.HasPrefix(s, "-X") && name != "wget":
			found = strings.EqualFold(s[2:], "DELETE")
			method = x
		case strings.HasPrefix(s, "--request=") || strings.HasPrefix(s, "--method="):
			_, m, _ := strings.Cut(s, "=")
			found = strings.EqualFold(m, "DELETE")
			method = x
		case (name == "http" || name == "https" || name == "xh") && !strings.HasPrefix(s, "-"):
			// httpie and xh: [METHOD] URL; the method is the first operand.
			found = strings.EqualFold(s, "DELETE")
			method = x
			i = len(args)
		}
	}
	if found {
		a.find(risk.Destructive, method.sp, name+" sends an HTTP DELETE, which deletes the resource at the URL (an index, a repository, a record)")
		return
	}
	for _, x := range args[1:] {
		if strings.Contains(x.s, "/_delete_by_query") {
			a.find(risk.Destructive, x.sp, name+" calls Elasticsearch's _delete_by_query, which deletes every matching document")
			return
		}
	}
}

// sedEmpties: sed -i with a script that deletes every line, or replaces
// every line with nothing, empties the files it edits.
func (a *analyzer) sedEmpties(c *call) {
	os, ops := a.scan(opts{short: "efl", long: []string{"expression", "file", "line-length"}}, c.args)
	inPlace, quiet := false, false
	var scripts []arg
	for _, o := range os {
		switch {
		case o.name == "-i" || strings.HasPrefix(o.name, "--in-place") || strings.HasPrefix(o.name, "--") && longOpt(o.name, "--in-place", 4):
			inPlace = true
		case o.name == "-n" || o.name == "--quiet" || o.name == "--silent":
			quiet = true
		case o.name == "-e" || o.name == "--expression":
			scripts = append(scripts, o.val)
		case o.name == "-f" || o.name == "--file":
			return
		}
	}
	if !inPlace {
		return
	}
	if len(scripts) == 0 && len(ops) > 0 {
		scripts, ops = ops[:1], ops[1:]
	}
	if len(ops) == 0 {
		return
	}
	for _, s := range scripts {
		if !s.dyn && sedEmptiesAll(s.s, quiet) {
			a.find(risk.Destructive, wordsSpan(s, ops[len(ops)-1]), "the sed script "+quote(s.s)+" deletes every line, so sed -i empties "+a.operandText(ops))
			return
		}
	}
}

// sedEmptiesAll reports a sed script that leaves nothing of any line: d on
// every line (no address, 1,$, /./ …), a substitution of the whole line
// with nothing, or -n with no p.
func sedEmptiesAll(s string, quiet bool) bool {
	t := strings.Join(strings.Fields(s), "")
	t = strings.TrimSuffix(t, ";")
	if quiet && !strings.ContainsAny(t, "pPwWlr=") {
		return true
	}
	for _, addr := range []string{"", "1,$", "0,$", ",$", "/./", "/.*/", "/^/", "/$/", "/^.*$/", "1~1", "0~1"} {
		if t == addr+"d" || t == addr+"!d" && addr == "" {
			return true
		}
	}
	for _, re := range []string{".*", "^.*$", "^.*", ".*$"} {
		if t == "s/"+re+"//" || t == "s/"+re+"//g" || t == "s|"+re+"||" {
			return true
		}
	}
	return false
}

// wideDirs are directories below which a recursive chmod or chown breaks
// the system or the programs installed, beside those isSystemDir names.
var wideDirs = [...]string{"/usr/local", "/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib64", "/usr/share", "/usr/libexec",
	"/lib64", "/lib32", "/var/lib", "/var/log", "/var/spool", "/etc/ssh", "/etc/sudoers.d", "/srv", "/private", "/Applications", "/dev", "/sys", "/proc", "/run"}

// chmodWide: ruleChmod judges / , the home and the top system directories;
// this adds the directories of wideDirs and globs of everything in the home
// or the root (chmod -R 000 ~/*).
func (a *analyzer) chmodWide(c *call, name string) {
	os, ops := a.scan(opts{long: []string{"reference", "from"}}, c.args)
	if !(has(os, "-R", "--recursive") || hasPrefixOpt(os, "--recur")) {
		return
	}
	if len(ops) > 0 {
		ops = ops[1:] // the mode or owner
	}
	for _, x := range ops {
		p := resolve(x.s, c.cwd)
		if x.dyn || p == "" || p == "/" || p == a.env.Home || isSystemDir(p) {
			continue // ruleChmod's own finding
		}
		wide := false
		for _, d := range wideDirs {
			if p == d || strings.HasPrefix(p, d+"/") || x.glob && strings.HasPrefix(d, strings.TrimSuffix(strings.TrimSuffix(p, "*"), "/")) {
				wide = true
			}
		}
		if x.glob {
			dir := p[:strings.LastIndexByte(p, '/')+1]
			dir = strings.TrimSuffix(dir, "/")
			if dir == "" || dir == a.env.Home || isSystemDir(dir) {
				wide = true
			}
		}
		if wide {
			a.find(risk.Destructive, c.sp, name+" -R on "+quote(a.text(x.sp))+" changes every file of a home or system directory and cannot easily be undone")
		}
	}
}

// composeLocal reports docker compose subcommands that only read the
// project and the local daemon (issue 9 §5: not network).
func composeLocal(sub string) bool {
	switch sub {
	case "ps", "ls", "logs", "config", "images", "top", "version", "port", "events", "stop", "start", "restart", "pause", "unpause", "kill", "wait", "stats":
		return true
	}
	return false
}

// helmLocal reports helm template and lint of a local chart: no cluster
// and no repository is contacted unless a chart is named by URL or
// --repo, or the templates are validated against the cluster.
func helmLocal(c *call) bool {
	v := firstVerb(c, "template", "lint", "version", "create", "package", "completion", "env", "verify", "install", "upgrade", "list", "status", "get", "show", "pull", "push", "repo", "dependency", "search", "uninstall", "rollback", "history", "test", "plugin", "registry")
	switch v {
	case "version", "completion", "env", "create":
		return true
	case "template", "lint", "package":
	default:
		return false
	}
	for _, x := range c.args[1:] {
		if x.dyn || strings.Contains(x.s, "://") || strings.HasPrefix(x.s, "oci:") || strings.HasPrefix(x.s, "--repo") || x.s == "--validate" ||
			strings.HasPrefix(x.s, "--dependency-update") || x.s == "-u" || x.s == "--verify" {
			return false
		}
	}
	return true
}
