package shellrisk

import (
	"slices"
	"strings"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// Build tools whose options run code (issue 9 §4, "Programs whose options
// run code"). A build tool runs the project's own build, which a rule for
// the tool trusts; these options make it run something else as well: a
// program named on the command line (mvn -Dexec.executable, cmake
// -DCMAKE_C_COMPILER_LAUNCHER, cargo --config build.rustc-wrapper, bazel
// --run_under, ninja -t msvc), a script from elsewhere (gradle -I, cmake
// -P, bazel --bazelrc), or a command of the tool's own (cmake -E rm). A
// program or command so named is judged by its own rules, so its risk is
// carried through: `cmake -E rm -rf src` is as destructive as `rm -rf src`
// and lists `rm -rf src` among the commands. An option these tables do
// not know, a property or cache variable that may name a program, and a
// configuration file that is not read make the call Opaque: an allow rule
// covers a call only when every word of it is understood.

// ruleForBuild returns the rule for a program of this file's class, or nil:
// build tools whose options run code (mvn exec, cmake -E, gradle, cargo, bazel).
// ruleFor consults it before its own table, so a rule returned here
// replaces the general one for that program.
func ruleForBuild(name string) rule {
	switch name {
	case "mvn", "mvnw", "mvnd":
		return ruleMaven
	case "gradle", "gradlew":
		return ruleGradle
	case "cmake":
		return ruleCMake
	case "cargo":
		return ruleCargo
	case "bazel", "bazelisk":
		return ruleBazel
	case "ninja", "ninja-build", "samu":
		return ruleNinja
	case "pip", "pip3":
		return rulePip
	}
	return nil
}

// sub returns a word standing for part of x: its text s, x's span.
func sub(x arg, s string) arg { return arg{s: s, sp: x.sp, dyn: x.dyn, w: x.w} }

// runArgv judges argv as a command the build tool runs, with arguments of
// its own (a compiler line, a file name) appended at run time.
func (a *analyzer) runArgv(c *call, argv []arg, what string) {
	for _, x := range argv {
		if x.dyn {
			a.opaque(x.sp, what+" names a program built at run time, which cannot be checked")
			return
		}
	}
	if len(argv) == 0 || argv[0].s == "" {
		return
	}
	a.inner(c, argv, c.cwd, true)
}

// splitList splits a CMake list (a;b;c) or a whitespace-separated string
// into words that all carry x's span.
func splitList(x arg, s string, semicolons bool) []arg {
	var parts []string
	if semicolons {
		parts = strings.Split(s, ";")
	} else {
		parts = strings.Fields(s)
	}
	out := make([]arg, 0, len(parts))
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, sub(x, p))
		}
	}
	return out
}

// simpleValue reports a value that is a plain literal: ON, 17, Release,
// clang;lld. It holds no path, space or shell character, so a build script
// cannot run it as a program of the caller's choice.
func simpleValue(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.,;:+=@%-", c) >= 0) {
			return false
		}
	}
	return true
}

// shellSpecial reports characters a shell reads differently from a program
// that splits its arguments itself.
func shellSpecial(s string) bool { return strings.ContainsAny(s, ";&|<>$`#(){}*?[]~!\\\n") }

// ---------------------------------------------------------------- Maven

// mavenOpts is the table of Maven 3.9's options, as its commons-cli
// GnuParser reads them: one option a word, never abbreviated; a
// one-letter option that takes a value takes it attached (-DskipTests,
// -T4, -Pci, -D=x) or as the next word; options of several letters after
// one dash (-am, -pl) stand whole, their value the next word or attached
// after "=". A one-letter flag followed by more text (-Ux), which
// GnuParser splits into the flag and a goal, is not understood, nor are
// the spellings GnuParser also takes (-offline, --o). "--" ends the
// options: the words after it are goals.
var mavenOpts = opts{
	short: "DPTbflst", long: []string{"define", "activate-profiles", "threads", "builder", "file", "log-file", "settings",
		"toolchains", "global-settings", "global-toolchains", "projects", "resume-from", "encrypt-master-password",
		"encrypt-password", "color"},
	flags: "BCNUVXcehoqv", flagsLong: []string{"also-make", "also-make-dependents", "batch-mode", "strict-checksums",
		"lax-checksums", "check-plugin-updates", "errors", "fail-at-end", "fail-fast", "fail-never", "help",
		"ignore-transitive-repositories", "legacy-local-repository", "non-recursive", "no-plugin-registry",
		"no-plugin-updates", "no-snapshot-updates", "no-transfer-progress", "offline", "quiet", "update-snapshots",
		"update-plugins", "version", "show-version", "debug"},
	wordValue: []string{"gs", "gt", "pl", "rf", "emp", "ep"},
	wordFlags: []string{"am", "amd", "cpu", "fae", "ff", "fn", "itr", "llr", "npr", "npu", "nsu", "ntp", "up"},
	exact:     true, complete: true, noCluster: true,
}

var (
	mavenPhases = []string{"validate", "initialize", "generate-sources", "process-sources", "generate-resources",
		"process-resources", "compile", "process-classes", "generate-test-sources", "process-test-sources",
		"generate-test-resources", "process-test-resources", "test-compile", "process-test-classes", "test",
		"prepare-package", "package", "pre-integration-test", "integration-test", "post-integration-test", "verify",
		"install", "deploy", "pre-clean", "clean", "post-clean", "pre-site", "site", "post-site", "site-deploy"}
	// mavenPlugins are plugin prefixes whose goals build, check, report or
	// change the project's own files.
	mavenPlugins = []string{"clean", "compiler", "surefire", "failsafe", "install", "jar", "war", "ear", "source",
		"javadoc", "resources", "dependency", "help", "versions", "enforcer", "checkstyle", "pmd", "spotbugs", "jacoco",
		"site", "spotless", "license", "archetype", "wrapper", "build-helper", "shade", "assembly", "surefire-report",
		"project-info-reports", "jxr", "buildnumber", "git-commit-id", "sortpom", "fmt", "formatter", "tidy",
		"flatten", "toolchains", "dependency-check", "cyclonedx", "openapi-generator", "protobuf", "jib", "native",
		"spring-boot", "quarkus", "jetty", "tomcat7", "liberty", "frontend", "release", "gpg", "nexus-staging",
		"central-publishing", "deploy", "flyway", "liquibase", "exec", "antrun", "groovy", "gmavenplus", "scala"}
	// mavenHarmlessProps are -D properties that only skip, select or name
	// things; any other property may be read by a plugin as a program, a
	// JVM option or a path, and makes the call Opaque.
	mavenHarmlessProps = []string{"skipTests", "maven.test.skip", "test", "it.test", "skipITs", "maven.javadoc.skip",
		"maven.source.skip", "checkstyle.skip", "spotbugs.skip", "pmd.skip", "cpd.skip", "jacoco.skip", "enforcer.skip",
		"gpg.skip", "license.skip", "rat.skip", "spotless.check.skip", "spotless.apply.skip", "maven.main.skip",
		"maven.install.skip", "maven.deploy.skip", "maven.site.skip", "failIfNoTests", "surefire.failIfNoSpecifiedTests",
		"maven.test.failure.ignore", "revision", "changelist", "sha1", "style.color", "groupId", "artifactId",
		"version", "package", "archetypeGroupId", "archetypeArtifactId", "archetypeVersion", "interactiveMode",
		"includes", "excludes", "verbose", "skip", "newVersion", "generateBackupPoms", "maven.compiler.source",
		"maven.compiler.target", "maven.compiler.release", "project.build.sourceEncoding", "file.encoding",
		"spring-boot.run.profiles", "spring.profiles.active", "quarkus.profile", "dependency", "classifier",
		"surefire.rerunFailingTestsCount", "trimStackTrace", "maven.wagon.http.retryHandler.count", "exec.mainClass",
		"tycho.mode", "skipDocker", "dockerfile.skip", "jib.skip", "maven.resources.skip", "mdep.analyze.skip",
		"aether.syncContext.named.factory", "maven.artifact.threads", "scope", "includeScope", "excludeTransitive",
		"maven.plugin.validation", "checkstyle.failOnViolation", "failOnWarning", "maven.compiler.fork"}
)

// ruleMaven judges mvn: its options, its -D properties (exec.executable and
// exec.args are the program exec:exec runs) and its goals.
func ruleMaven(a *analyzer, c *call) {
	var exe, exeArgs *arg
	os, goals := a.scanQuiet(mavenOpts, c.args)
	for _, op := range os {
		if op.unknown {
			a.unknownOpt(c.args[0], op)
			continue
		}
		v := op.val
		if len(op.name) == 2 && op.attached {
			v.s = strings.TrimPrefix(v.s, "=") // GnuParser takes -D=x as -D x
		}
		switch op.name {
		case "-D", "--define":
			if v == (arg{}) {
				continue // the value is missing
			}
			key, value, _ := strings.Cut(v.s, "=")
			switch {
			case v.dyn:
				a.opaque(v.sp, "mvn -D is given a property built at run time, which may name a program a plugin runs")
			case key == "exec.executable":
				e := sub(v, value)
				exe = &e
			case key == "exec.args" || key == "exec.commandlineArgs":
				e := sub(v, value)
				exeArgs = &e
			case key == "maven.compiler.executable" || key == "gpg.executable" || key == "jvm" || key == "docker.executable":
				a.find(risk.Execute, v.sp, "mvn -D"+key+" names the program a plugin runs")
				a.runArgv(c, []arg{sub(v, value)}, "mvn -D"+key)
			case key == "maven.repo.local" || key == "outputFile" || key == "outputDirectory":
				a.access(sub(v, value), c.cwd, true, false)
			case slices.Contains(mavenHarmlessProps, key):
			default:
				a.opaque(v.sp, "mvn -D"+key+" sets a build property, which a plugin may read as a program to run, a JVM option (argLine) or a path; no rule allows it")
			}
		case "-f", "--file", "-s", "--settings", "-gs", "--global-settings", "-t", "--toolchains", "-gt", "--global-toolchains":
			if v != (arg{}) {
				a.access(v, c.cwd, false, false)
			}
		case "-l", "--log-file":
			if v != (arg{}) {
				a.access(v, c.cwd, true, false)
			}
		}
	}
	for _, g := range goals {
		if g.dyn {
			a.opaque(g.sp, "mvn is given a word built at run time, which may be an option or a property that names a program")
		}
	}
	if exe != nil {
		code := exe.s
		if exeArgs != nil {
			code += " " + exeArgs.s
			// Both words, and what lies between them, are the payload's span.
			exe.sp = risk.Span{Start: min(exe.sp.Start, exeArgs.sp.Start), End: max(exe.sp.End, exeArgs.sp.End)}
		}
		a.find(risk.Execute, exe.sp, "mvn -Dexec.executable makes the exec plugin run "+quote(code))
		if shellSpecial(code) {
			a.opaque(exe.sp, "the exec plugin splits "+quote(code)+" itself, without a shell, so the shell's reading of it may not be what runs")
		}
		v := sub(*exe, code)
		a.runValue(v, "mvn -Dexec.executable", false)
	} else if exeArgs != nil {
		a.opaque(exeArgs.sp, "mvn -Dexec.args hands arguments to a program the pom names, which is not read here")
	}
	for _, g := range goals {
		if !g.dyn {
			a.mavenGoal(c, g)
		}
	}
	rulePackage(a, c)
}

// mavenGoal judges one goal or phase.
func (a *analyzer) mavenGoal(c *call, g arg) {
	if slices.Contains(mavenPhases, g.s) {
		switch g.s {
		case "deploy", "site-deploy":
			a.network(g.sp, "mvn "+g.s, "mvn "+g.s+" uploads the project's artifacts to a remote repository")
			if g.s == "deploy" {
				a.find(risk.Destructive, g.sp, "mvn deploy publishes the project's artifacts, which cannot be taken back")
			}
		}
		return
	}
	parts := strings.Split(g.s, ":")
	if len(parts) < 2 || len(parts) > 4 {
		a.opaque(g.sp, "mvn is given "+quote(g.s)+", which is neither a lifecycle phase nor a plugin goal the analyser knows")
		return
	}
	plugin, goal := parts[0], parts[len(parts)-1]
	if len(parts) > 2 {
		// groupId:artifactId[:version]:goal; the prefix comes from the
		// artifact: maven-X-plugin and X-maven-plugin are X.
		art := parts[1]
		plugin = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(art, "-plugin"), "maven-"), "-maven")
		if !strings.HasPrefix(parts[0], "org.apache.maven") && !strings.HasPrefix(parts[0], "org.codehaus.mojo") {
			a.opaque(g.sp, "mvn runs the plugin "+quote(parts[0]+":"+art)+", fetched by its coordinates, whose code the analyser does not know")
			return
		}
	}
	if !slices.Contains(mavenPlugins, plugin) {
		a.opaque(g.sp, "mvn runs the goal "+quote(g.s)+" of a plugin the analyser does not know, which may run any program")
		return
	}
	switch {
	case plugin == "exec" && goal == "exec":
		a.find(risk.Execute, g.sp, "mvn exec:exec runs the program exec.executable or the pom names")
	case plugin == "exec" || plugin == "antrun" || plugin == "groovy" || plugin == "gmavenplus" || plugin == "scala":
		a.find(risk.Execute, g.sp, "mvn "+g.s+" runs code or commands configured in the pom")
	case plugin == "spring-boot" || plugin == "quarkus" || plugin == "jetty" || plugin == "tomcat7" || plugin == "liberty":
		a.find(risk.Execute, g.sp, "mvn "+g.s+" runs the application")
	case plugin == "flyway" && goal == "clean", plugin == "liquibase" && (goal == "dropAll" || goal == "rollback"):
		a.find(risk.Destructive, g.sp, "mvn "+g.s+" drops the objects of the configured database")
	case plugin == "release" && (goal == "prepare" || goal == "perform" || goal == "rollback"),
		plugin == "deploy", plugin == "nexus-staging", plugin == "central-publishing", plugin == "jib" && goal == "build":
		a.network(g.sp, "mvn "+g.s, "mvn "+g.s+" pushes tags or uploads artifacts to a remote server")
		a.find(risk.Destructive, g.sp, "mvn "+g.s+" publishes a release, which cannot be taken back")
	case plugin == "archetype" || plugin == "dependency" && (goal == "get" || goal == "copy"):
		a.network(g.sp, "mvn "+g.s, "mvn "+g.s+" downloads artifacts from a remote repository")
	}
}

// ---------------------------------------------------------------- Gradle

// gradleOpts is the table of Gradle 8's options, as its CommandLineParser
// reads them: long options in full, --name=value or the next word; a
// one-letter option that takes a value takes it attached (-Dx=y, -D=x)
// or as the next word, and one-letter flags cluster (-is); "--" ends the
// options (the words after it are tasks and their options). Once a task
// is given, an option Gradle does not know is the task's (test --tests),
// passed to it.
var gradleOpts = opts{
	short: "xFMpbcPDIg", long: []string{"exclude-task", "console", "warning-mode", "max-workers", "priority", "update-locks",
		"dependency-verification", "write-verification-metadata", "include-build", "project-cache-dir", "project-dir",
		"build-file", "settings-file", "project-prop", "system-prop", "init-script", "gradle-user-home",
		"configuration-cache-problems", "tests"},
	flags: "?hvSsmtaqwid", flagsLong: []string{"help", "version", "full-stacktrace", "stacktrace", "scan", "no-scan",
		"build-cache", "no-build-cache", "configuration-cache", "no-configuration-cache", "configure-on-demand",
		"no-configure-on-demand", "continue", "no-continue", "daemon", "no-daemon", "foreground", "offline", "parallel",
		"no-parallel", "refresh-dependencies", "refresh-keys", "export-keys", "rerun-tasks", "rerun", "profile", "status",
		"stop", "watch-fs", "no-watch-fs", "write-locks", "dry-run", "continuous", "no-rebuild", "quiet", "warn", "info",
		"debug", "no-problems-report", "problems-report", "property-upgrade-report", "task-graph"},
	exact: true, complete: true,
}

var (
	gradleHarmlessProps = []string{"org.gradle.daemon", "org.gradle.parallel", "org.gradle.caching", "org.gradle.console",
		"org.gradle.logging.level", "org.gradle.warning.mode", "org.gradle.workers.max", "org.gradle.configureondemand",
		"org.gradle.configuration-cache", "org.gradle.vfs.watch", "org.gradle.priority", "test.single", "file.encoding"}
)

// ruleGradle judges gradle and ./gradlew: init scripts, another Gradle
// home and JVM properties run code from outside the project's build.
func ruleGradle(a *analyzer, c *call) {
	os, tasks := a.scanQuiet(gradleOpts, c.args)
	firstTask := -1 // where the first task starts, by its span
	for _, t := range tasks {
		if t.dyn {
			a.opaque(t.sp, "gradle is given a word built at run time, which may be an option that runs a script")
		} else if firstTask < 0 {
			firstTask = t.sp.Start // tasks are the project's build code
		}
	}
	for _, op := range os {
		if op.unknown {
			if firstTask >= 0 && op.x.sp.Start > firstTask && strings.HasPrefix(op.name, "--") {
				continue // an option of the task before it (test --tests, wrapper --gradle-version)
			}
			a.unknownOpt(c.args[0], op)
			continue
		}
		v := op.val
		if v == (arg{}) {
			continue // a flag, or the value is missing
		}
		if len(op.name) == 2 && op.attached {
			v.s = strings.TrimPrefix(v.s, "=") // Gradle takes -D=x as -D x
		}
		name := op.name
		switch name {
		case "-I", "--init-script":
			a.access(v, c.cwd, false, false)
			a.opaque(v.sp, "gradle "+name+" runs the init script "+quote(v.s)+" before the project's build, and its code is not checked; no rule allows it")
		case "-g", "--gradle-user-home":
			a.access(v, c.cwd, false, false)
			a.opaque(v.sp, "gradle "+name+" runs the init scripts and reads the properties of another Gradle home, which are not checked")
		case "-D", "--system-prop":
			key, _, _ := strings.Cut(v.s, "=")
			if v.dyn || !slices.Contains(gradleHarmlessProps, key) {
				a.opaque(v.sp, "gradle -D"+key+" sets a JVM property of the build, which may name another JDK, JVM options or agents; no rule allows it")
			}
		case "-P", "--project-prop":
			if v.dyn {
				a.opaque(v.sp, "gradle -P is given a property built at run time")
			}
		case "-p", "--project-dir", "--include-build", "-b", "--build-file", "-c", "--settings-file":
			a.access(v, c.cwd, false, false)
		case "--project-cache-dir":
			a.access(v, c.cwd, true, false)
		}
	}
	rulePackage(a, c)
}

// ---------------------------------------------------------------- CMake

// cmakeTool maps the commands of cmake -E to the programs that do the
// same, with the options they stand for; the program's rule judges them.
var cmakeTool = lazy[map[string][]string]{build: func() map[string][]string {
	return map[string][]string{
		"rm": {"rm"}, "remove": {"rm"}, "remove_directory": {"rm", "-r"}, "copy": {"cp"}, "copy_if_different": {"cp"},
		"copy_if_newer": {"cp"}, "copy_directory": {"cp", "-r"}, "copy_directory_if_different": {"cp", "-r"},
		"copy_directory_if_newer": {"cp", "-r"}, "rename": {"mv"}, "create_symlink": {"ln", "-s"},
		"create_hardlink": {"ln"}, "make_directory": {"mkdir", "-p"}, "touch": {"touch"}, "touch_nocreate": {"touch"},
		"cat": {"cat"}, "md5sum": {"md5sum"}, "sha1sum": {"sha1sum"}, "sha224sum": {"cat"}, "sha256sum": {"sha256sum"},
		"sha384sum": {"cat"}, "sha512sum": {"sha512sum"}, "compare_files": {"cmp"}, "tar": {"tar"},
		"env": {"env"}, "environment": {"env"},
	}
}}

// cmakeHarmless are cmake -E commands that touch no file and run nothing.
var cmakeHarmless = []string{"echo", "echo_append", "sleep", "true", "false", "capabilities", "cmake_echo_color"}

// cmakeVars are CMake variables that only choose how the project builds.
var cmakeVars = []string{"CMAKE_BUILD_TYPE", "CMAKE_INSTALL_PREFIX", "CMAKE_EXPORT_COMPILE_COMMANDS", "CMAKE_CXX_STANDARD",
	"CMAKE_C_STANDARD", "CMAKE_CXX_STANDARD_REQUIRED", "CMAKE_CXX_EXTENSIONS", "CMAKE_C_EXTENSIONS",
	"CMAKE_POSITION_INDEPENDENT_CODE", "CMAKE_VERBOSE_MAKEFILE", "CMAKE_COLOR_DIAGNOSTICS", "CMAKE_COLOR_MAKEFILE",
	"CMAKE_OSX_ARCHITECTURES", "CMAKE_OSX_DEPLOYMENT_TARGET", "CMAKE_INTERPROCEDURAL_OPTIMIZATION", "CMAKE_UNITY_BUILD",
	"CMAKE_SKIP_RPATH", "CMAKE_INSTALL_LIBDIR", "CMAKE_INSTALL_BINDIR", "CMAKE_INSTALL_INCLUDEDIR",
	"CMAKE_FIND_PACKAGE_PREFER_CONFIG", "CMAKE_MSVC_RUNTIME_LIBRARY", "CMAKE_SYSTEM_NAME", "CMAKE_SYSTEM_PROCESSOR",
	"CMAKE_CONFIGURATION_TYPES", "CMAKE_DEBUG_POSTFIX", "CMAKE_CUDA_ARCHITECTURES", "CMAKE_SYSTEM_VERSION",
	"CMAKE_RUNTIME_OUTPUT_DIRECTORY", "CMAKE_LIBRARY_OUTPUT_DIRECTORY", "CMAKE_ARCHIVE_OUTPUT_DIRECTORY",
	"CMAKE_EXPORT_PACKAGE_REGISTRY", "CMAKE_COMPILE_WARNING_AS_ERROR", "CMAKE_POLICY_VERSION_MINIMUM",
	"BUILD_SHARED_LIBS", "BUILD_TESTING"}

// cmakeFlagsOK reports compiler flags that load nothing: -O2, -g, -Wall,
// -DNDEBUG, -std=c++17, -march=native, -fPIC. -fplugin, -B, -specs,
// -wrapper, -Xclang -load and -fuse-ld=PATH make the compiler run or
// load other code.
func cmakeFlagsOK(s string) bool {
	for _, f := range strings.Fields(s) {
		switch {
		case strings.HasPrefix(f, "-fplugin"), strings.HasPrefix(f, "-fuse-ld=") && strings.Contains(f, "/"),
			strings.HasPrefix(f, "-fpass-plugin"), strings.HasPrefix(f, "-fprofile-use"):
			return false
		case strings.HasPrefix(f, "-O"), strings.HasPrefix(f, "-g"), strings.HasPrefix(f, "-W") && !strings.HasPrefix(f, "-Wl,") && !strings.HasPrefix(f, "-Wp,"),
			strings.HasPrefix(f, "-D") && simpleValue(f[2:]), strings.HasPrefix(f, "-std="), strings.HasPrefix(f, "-march="),
			strings.HasPrefix(f, "-mtune="), strings.HasPrefix(f, "-f") && simpleValue(f[1:]), f == "-pthread", f == "-pipe",
			strings.HasPrefix(f, "/W"), strings.HasPrefix(f, "/O"), f == "/EHsc", f == "-Wl,--as-needed", f == "-Wl,-O1":
		default:
			return false
		}
	}
	return true
}

// ruleCMake judges cmake: -E commands are the programs they stand for,
// -P and -C run CMake scripts, -D sets cache variables (a compiler, a
// launcher, a toolchain file are programs or code the build runs), and
// --build hands the words after -- to the native build tool.
func ruleCMake(a *analyzer, c *call) {
	args := c.args
	if len(args) > 1 && !args[1].dyn && args[1].s == "-E" {
		a.cmakeCommand(c, args[2:])
		return
	}
	o := opts{short: "SBGTACDUPt", long: []string{"build", "install", "open", "preset", "toolchain", "install-prefix",
		"target", "config", "component", "prefix", "default-directory-permissions", "workflow", "find-package"},
		flags: "NLhHvj", flagsLong: []string{"fresh", "list-presets", "debug-trycompile", "debug-output", "trace",
			"trace-expand", "warn-uninitialized", "warn-unused-vars", "no-warn-unused-cli", "check-system-vars",
			"compile-no-warning-as-error", "help", "version", "clean-first", "verbose", "strip",
			"resolve-package-references", "help-full", "help-manual", "help-command", "help-module", "help-policy",
			"help-property", "help-variable", "help-commands", "help-modules", "help-policies", "help-properties",
			"help-variables", "help-command-list", "help-module-list", "help-policy-list", "help-property-list",
			"help-variable-list", "help-manual-list", "help-usage"},
		optional: []string{"log-level", "log-context", "debug-find", "debug-find-pkg", "debug-find-var", "trace-format",
			"trace-source", "trace-redirect", "profiling-output", "profiling-format", "graphviz", "system-information",
			"parallel", "loglevel", "trace-json-output"},
		optShort: "LW", complete: true}
	rest := args
	var native []arg
	for i, x := range args {
		if x.s == "--" && !x.dyn {
			rest, native = args[:i], args[i+1:]
			break
		}
	}
	os, ops := a.scan(o, rest)
	for _, op := range os {
		v := op.val
		switch op.name {
		case "-E":
			a.opaque(op.x.sp, "cmake -E must come first; placed elsewhere it is not read as cmake's own command")
		case "-P", "-C":
			a.access(v, c.cwd, false, false)
			what := "the CMake script "
			if op.name == "-C" {
				what = "the initial-cache script "
			}
			a.find(risk.Execute, v.sp, "cmake "+op.name+" runs "+what+quote(v.s)+", whose code (execute_process, file(REMOVE)) is not checked")
			if op.name == "-P" {
				return // the words after the script are its arguments
			}
		case "--toolchain":
			a.cmakeScriptVar(c, "CMAKE_TOOLCHAIN_FILE", v)
		case "-D":
			a.cmakeDefine(c, v)
		case "-S", "--build", "--install", "--open", "--find-package":
			if v.s != "" {
				a.access(v, c.cwd, false, false)
			}
		case "-B", "--prefix", "--install-prefix":
			a.access(v, c.cwd, true, false)
		case "--trace-redirect", "--profiling-output", "--graphviz", "--system-information":
			if v.s != "" {
				a.access(v, c.cwd, true, false)
			}
		case "-W":
			switch strings.TrimPrefix(v.s, "no-") {
			case "dev", "deprecated", "error=dev", "error=deprecated":
			default:
				a.unknownOpt(c.args[0], op)
			}
		case "-L":
			if strings.Trim(v.s, "AH") != "" {
				a.unknownOpt(c.args[0], op)
			}
		}
	}
	for _, x := range ops {
		if x.dyn {
			// scan leaves a word built at run time among the operands: it
			// may be -D with any variable.
			a.opaque(x.sp, "cmake is given a word built at run time, which may be an option that names a program")
			continue
		}
		a.access(x, c.cwd, false, false) // the source or build directory
	}
	for _, x := range native {
		// Handed to make or ninja as they are.
		if x.dyn || !(x.s == "-k" || x.s == "-v" || x.s == "VERBOSE=1" || strings.HasPrefix(x.s, "-j") && (len(x.s) == 2 || isDigits(x.s[2:])) ||
			strings.HasPrefix(x.s, "-l") && isDigits(x.s[2:]) || isDigits(x.s)) {
			a.opaque(x.sp, "cmake --build hands "+quote(x.s)+" to the native build tool (make, ninja), which may read it as code or an option the analyser does not know")
			break
		}
	}
}

// cmakeCommand judges cmake -E CMD ARGS by the program CMD stands for.
func (a *analyzer) cmakeCommand(c *call, args []arg) {
	if len(args) == 0 {
		return
	}
	cmd := args[0]
	if cmd.dyn {
		a.opaque(cmd.sp, "cmake -E is given a command built at run time")
		return
	}
	rest := args[1:]
	switch {
	case slices.Contains(cmakeHarmless, cmd.s):
		return
	case cmd.s == "chdir" || cmd.s == "time":
		cwd := c.cwd
		if cmd.s == "chdir" {
			if len(rest) == 0 {
				return
			}
			a.access(rest[0], c.cwd, false, false)
			cwd = a.chdir(rest[0], c.cwd)
			rest = rest[1:]
		}
		a.inner(c, rest, cwd, false)
		return
	case cmd.s == "environment":
		rest = nil
	}
	tool, ok := cmakeTool.get()[cmd.s]
	if !ok {
		a.opaque(cmd.sp, "cmake -E "+quote(cmd.s)+" is a command the analyser does not know")
		return
	}
	argv := make([]arg, 0, len(tool)+len(rest))
	for _, t := range tool {
		argv = append(argv, sub(cmd, t))
	}
	argv = append(argv, rest...)
	a.inner(c, argv, c.cwd, false)
}

// cmakeDefine judges -D NAME[:TYPE]=VALUE.
func (a *analyzer) cmakeDefine(c *call, v arg) {
	def, value, _ := strings.Cut(v.s, "=")
	name, _, _ := strings.Cut(def, ":")
	if v.dyn {
		a.opaque(v.sp, "cmake -D is given a variable built at run time, which may name a program the build runs")
		return
	}
	val := sub(v, value)
	switch {
	case strings.HasSuffix(name, "_COMPILER_LAUNCHER") || strings.HasSuffix(name, "_LINKER_LAUNCHER") ||
		strings.HasSuffix(name, "_CLANG_TIDY") || strings.HasSuffix(name, "_CPPCHECK") || strings.HasSuffix(name, "_CPPLINT") ||
		strings.HasSuffix(name, "_INCLUDE_WHAT_YOU_USE") || name == "CMAKE_LINK_WHAT_YOU_USE_CHECK" ||
		name == "CMAKE_CROSSCOMPILING_EMULATOR" || strings.HasSuffix(name, "_LAUNCHER") || strings.HasSuffix(name, "_WRAPPER"):
		a.find(risk.Execute, v.sp, "cmake -D"+name+" makes the build run "+quote(value)+" around every compile, link or test")
		a.runArgv(c, splitList(val, value, true), "cmake -D"+name)
	case strings.HasPrefix(name, "CMAKE_") && (strings.HasSuffix(name, "_COMPILER") || strings.HasSuffix(name, "_COMPILER_AR") ||
		strings.HasSuffix(name, "_COMPILER_RANLIB")) || name == "CMAKE_MAKE_PROGRAM" || name == "CMAKE_AR" ||
		name == "CMAKE_RANLIB" || name == "CMAKE_LINKER" || name == "CMAKE_NM" || name == "CMAKE_OBJCOPY" ||
		name == "CMAKE_OBJDUMP" || name == "CMAKE_STRIP" || name == "CMAKE_ADDR2LINE" || name == "CMAKE_READELF" ||
		strings.HasSuffix(name, "_EXECUTABLE") || strings.HasSuffix(name, "_PROGRAM") || strings.HasSuffix(name, "_COMMAND"):
		a.find(risk.Execute, v.sp, "cmake -D"+name+" names the program "+quote(value)+" the build runs")
		a.runArgv(c, splitList(val, value, true), "cmake -D"+name)
	case name == "CMAKE_TOOLCHAIN_FILE" || strings.HasPrefix(name, "CMAKE_PROJECT_") && strings.Contains(name, "INCLUDE") ||
		strings.HasPrefix(name, "CMAKE_USER_MAKE_RULES_OVERRIDE"):
		a.cmakeScriptVar(c, name, val)
	case strings.HasPrefix(name, "CMAKE_") && strings.Contains(name, "FLAGS"):
		if !cmakeFlagsOK(value) {
			a.opaque(v.sp, "cmake -D"+name+" passes "+quote(value)+" to the compiler or linker, which may make it load or run other code; no rule allows it")
		}
	case name == "CMAKE_MODULE_PATH" || name == "CMAKE_PREFIX_PATH" || name == "CMAKE_FIND_ROOT_PATH" ||
		strings.HasSuffix(name, "_DIR") || strings.HasSuffix(name, "_ROOT") || strings.HasSuffix(name, "_PATH") ||
		strings.HasSuffix(name, "_INCLUDE_DIR") || strings.HasSuffix(name, "_LIBRARY"):
		// CMake loads package configuration code from these directories.
		for _, p := range splitList(val, value, true) {
			a.access(p, c.cwd, false, false)
		}
	case slices.Contains(cmakeVars, name):
	case strings.HasPrefix(name, "CMAKE_") || !simpleValue(value):
		a.opaque(v.sp, "cmake -D"+name+" sets a variable the project's CMake code may run as a program or read as a path ("+quote(value)+"); no rule allows it")
	}
}

// cmakeScriptVar judges a variable naming a file of CMake code the
// configure step runs.
func (a *analyzer) cmakeScriptVar(c *call, name string, v arg) {
	for _, p := range splitList(v, v.s, true) {
		a.access(p, c.cwd, false, false)
	}
	a.find(risk.Execute, v.sp, "cmake runs the CMake code of "+quote(v.s)+" ("+name+"), which is not checked")
}

// ---------------------------------------------------------------- Cargo

// cargoGlobalOpts are cargo's options before its subcommand, and
// cargoOpts those of its subcommands (of them all: cargo build, test,
// install, tree, publish, …), as clap reads them: long options in full,
// --name=value or the next word; one-letter flags cluster (-vv); a
// one-letter option that takes a value takes it attached (-pfoo, -p=foo)
// or as the next word; "--" ends the options (the words after it are the
// binary's, the test harness's or the compiler's).
var (
	cargoGlobalOpts = opts{short: "ZC", long: []string{"color", "config", "explain"},
		flags: "vqhV", flagsLong: []string{"verbose", "quiet", "help", "version", "list", "locked", "frozen", "offline"},
		stop: true, exact: true, complete: true}
	cargoOpts = opts{short: "pjFZCei", long: []string{"package", "exclude", "jobs", "target", "target-dir", "features",
		"profile", "bin", "example", "test", "bench", "message-format", "manifest-path", "color", "config", "explain",
		"lockfile-path", "artifact-dir", "out-dir", "registry", "index", "git", "branch", "tag", "rev", "path", "root",
		"vcs", "name", "edition", "rename", "invert", "prefix", "edges", "depth", "format", "charset", "format-version",
		"filter-platform", "precise", "output-format", "crate-type", "target-applies-to-host", "token", "limit", "add",
		"remove", "print", "id"},
		flags: "vqrfhVnd", flagsLong: []string{"verbose", "quiet", "release", "all-features", "no-default-features",
			"workspace", "all", "lib", "bins", "tests", "examples", "benches", "all-targets", "locked", "frozen", "offline",
			"keep-going", "future-incompat-report", "ignore-rust-version", "no-run", "no-fail-fast", "doc", "no-deps",
			"open", "document-private-items", "check", "fix", "allow-dirty", "allow-staged", "allow-no-vcs", "broken-code",
			"edition-idioms", "dry-run", "force", "dev", "build", "optional", "no-optional", "unit-graph", "build-plan",
			"help", "version", "list", "no-verify", "no-metadata", "duplicates", "no-dedupe", "all-packages",
			"exact-versions", "incompatible", "recursive", "workspace-root", "no-track", "debug", "no-default",
			"all-crates", "message-format-json", "undo", "aggressive", "default-features", "public", "no-public"},
		optional: []string{"timings"}, exact: true, complete: true}
	// cargoConfigOK are configuration keys that only choose how the build
	// goes; keys below profile. choose optimisation and debug info.
	cargoConfigOK = []string{"build.jobs", "build.incremental", "build.target", "build.pipelining", "term.verbose",
		"term.color", "term.quiet", "term.progress.when", "term.progress.width", "net.offline", "net.retry",
		"http.timeout", "http.multiplexing", "http.debug", "cargo-new.vcs", "future-incompat-report.frequency",
		"registries.crates-io.protocol", "resolver.incompatible-rust-versions", "build.target-dir"}
	cargoZOK = []string{"unstable-options", "build-std", "build-std-features", "sparse-registry", "no-index-update",
		"minimal-versions", "direct-minimal-versions", "timings", "avoid-dev-deps", "help", "panic-abort-tests",
		"checksum-freshness", "package-workspace", "msrv-policy", "rustdoc-map", "binary-dep-depinfo"}
)

// ruleCargo judges cargo: --config settings that name a wrapper, linker or
// runner run that program on every compile or binary; a configuration
// file and most -Z flags change what cargo does in ways not read here.
func ruleCargo(a *analyzer, c *call) {
	args := c.args
	if len(args) > 1 && !args[1].dyn && strings.HasPrefix(args[1].s, "+") {
		// +toolchain, rustup's: a word of its own before cargo's.
		args = append([]arg{args[0]}, args[2:]...)
	}
	os, rest := a.scan(cargoGlobalOpts, args)
	a.cargoOptions(c, os)
	if len(rest) == 0 {
		rulePackage(a, c)
		return
	}
	sc := rest[0]
	if sc.dyn {
		// Its options are still read: a --config after it runs what it
		// names whatever the subcommand.
		a.opaque(sc.sp, "cargo is given a word built at run time, which may be a --config setting that names a program")
	} else if !slices.Contains(cargoSubs, sc.s) {
		// An external subcommand (cargo-foo) parses its own options.
		a.find(risk.Execute, sc.sp, "cargo "+sc.s+" runs the program cargo-"+sc.s+", which parses its own options")
		rulePackage(a, c)
		return
	}
	rustcSub := sc.s == "rustc" || sc.s == "rustdoc"
	// clap takes no "--" as an option's value: the first one ends the
	// options, and the words after it are the binary's or the tool's.
	words, pass := rest, []arg(nil)
	for i, x := range rest {
		if !x.dyn && x.s == "--" {
			words, pass = rest[:i], rest[i+1:]
			break
		}
	}
	// Read with "cargo SUB" as the program, the name an unknown option's
	// reason gives.
	sos, ops := a.scan(cargoOpts, append([]arg{{s: "cargo " + sc.s, sp: sc.sp}}, words[1:]...))
	a.cargoOptions(c, sos)
	for _, x := range ops {
		if x.dyn {
			a.opaque(x.sp, "cargo is given a word built at run time, which may be a --config setting that names a program")
		}
	}
	for _, x := range pass {
		if !x.dyn && rustcSub && (strings.Contains(x.s, "linker") || strings.Contains(x.s, "link-arg") || strings.Contains(x.s, "plugin") ||
			strings.Contains(x.s, "llvm-args") || strings.HasPrefix(x.s, "-Z") || strings.HasPrefix(x.s, "@")) {
			a.opaque(x.sp, "cargo "+sc.s+" hands "+quote(x.s)+" to the compiler, which may make it run a linker or load a plugin of the caller's choice; no rule allows it")
		}
	}
	rulePackage(a, c)
}

// cargoOptions judges cargo's options (scan made the command opaque for
// one it does not know).
func (a *analyzer) cargoOptions(c *call, os []opt) {
	for _, op := range os {
		if op.unknown {
			continue
		}
		v := op.val
		if v == (arg{}) {
			continue // a flag, or the value is missing
		}
		if len(op.name) == 2 && op.attached {
			v.s = strings.TrimPrefix(v.s, "=") // clap takes -p=foo as -p foo
		}
		switch op.name {
		case "--config":
			a.cargoConfig(c, v)
		case "-Z":
			flag, _, _ := strings.Cut(v.s, "=")
			if v.dyn || !slices.Contains(cargoZOK, flag) {
				a.opaque(v.sp, "cargo -Z "+quote(v.s)+" turns on an unstable feature the analyser does not know (config-include, script, host-config load or run other code); no rule allows it")
			}
		case "--manifest-path", "--path", "-C":
			a.access(v, c.cwd, false, false)
		case "--target-dir", "--artifact-dir", "--out-dir", "--root", "--lockfile-path":
			a.access(v, c.cwd, true, false)
		}
	}
}

var cargoSubs = []string{"build", "b", "check", "c", "clean", "doc", "d", "new", "init", "add", "remove", "rm", "run", "r",
	"test", "t", "bench", "update", "search", "publish", "install", "uninstall", "fmt", "clippy", "fix", "tree",
	"metadata", "fetch", "vendor", "package", "generate-lockfile", "locate-project", "pkgid", "verify-project",
	"version", "help", "login", "logout", "owner", "yank", "report", "rustc", "rustdoc", "info", "config", "exec",
	"nextest", "miri"}

// cargoConfig judges --config KEY=VALUE (TOML) or --config FILE.
func (a *analyzer) cargoConfig(c *call, v arg) {
	if v.dyn {
		a.opaque(v.sp, "cargo --config is given a setting built at run time, which may name a program cargo runs")
		return
	}
	key, value, ok := strings.Cut(v.s, "=")
	if !ok {
		a.access(v, c.cwd, false, false)
		a.opaque(v.sp, "cargo --config "+quote(v.s)+" reads a configuration file, which may name wrappers, linkers and runners; its settings are not read here")
		return
	}
	key = strings.ToLower(strings.ReplaceAll(strings.TrimSpace(key), " ", ""))
	value = strings.TrimSpace(value)
	last := key[strings.LastIndexByte(key, '.')+1:]
	switch {
	case key == "build.rustc-wrapper" || key == "build.rustc-workspace-wrapper" || key == "build.rustc" ||
		key == "build.rustdoc" || strings.HasPrefix(key, "target.") && (last == "linker" || last == "runner") ||
		key == "host.linker" || key == "doc.browser" || last == "credential-provider" ||
		strings.HasPrefix(key, "credential-alias."):
		argv, ok := tomlArgv(v, value, last == "runner" || last == "credential-provider" || strings.HasPrefix(key, "credential-alias."))
		a.find(risk.Execute, v.sp, "cargo --config "+key+" makes cargo run "+quote(value)+" for every compile, link or binary")
		if !ok {
			a.opaque(v.sp, "cargo --config "+key+" has a value the analyser cannot read as a program")
			return
		}
		a.runArgv(c, argv, "cargo --config "+key)
	case key == "build.target-dir":
		if argv, ok := tomlArgv(v, value, false); ok && len(argv) == 1 {
			a.access(argv[0], c.cwd, true, false)
		}
	case slices.Contains(cargoConfigOK, key), strings.HasPrefix(key, "profile.") && !strings.Contains(key, "flags"):
	default:
		a.opaque(v.sp, "cargo --config "+quote(key)+" is a setting the analyser does not know (rustflags, env, alias, source and paths can make the build run or load other code); no rule allows it")
	}
}

// tomlArgv reads a TOML string or array of strings as a command's words;
// split splits a string at white space, as cargo does for runners.
func tomlArgv(x arg, value string, split bool) ([]arg, bool) {
	str := func(s string) (string, bool) {
		s = strings.TrimSpace(s)
		if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
			inner := s[1 : len(s)-1]
			if strings.ContainsAny(inner, "\"\\") && s[0] == '"' {
				return "", false // escapes: not read
			}
			return inner, true
		}
		return "", false
	}
	if strings.HasPrefix(value, "[") && strings.HasSuffix(value, "]") {
		var out []arg
		for _, p := range strings.Split(value[1:len(value)-1], ",") {
			if strings.TrimSpace(p) == "" {
				continue
			}
			s, ok := str(p)
			if !ok {
				return nil, false
			}
			out = append(out, sub(x, s))
		}
		return out, true
	}
	s, ok := str(value)
	if !ok {
		return nil, false
	}
	if split {
		return splitList(x, s, false), true
	}
	return []arg{sub(x, s)}, true
}

// ---------------------------------------------------------------- Bazel

var (
	bazelStartupFlags = []string{"batch", "nobatch", "nosystem_rc", "nohome_rc", "noworkspace_rc", "system_rc", "home_rc",
		"workspace_rc", "ignore_all_rc_files", "noignore_all_rc_files", "client_debug", "noclient_debug", "block_for_lock",
		"noblock_for_lock", "watchfs", "nowatchfs", "windows_enable_symlinks", "autodetect_server_javabase",
		"noautodetect_server_javabase", "expand_configs_in_place", "quiet", "noquiet", "shutdown_on_low_sys_mem",
		"batch_cpu_scheduling", "host_jvm_debug"}
	bazelStartupValued = []string{"max_idle_secs", "output_base", "output_user_root", "local_startup_timeout_secs",
		"io_nice_level", "connect_timeout_secs", "digest_function", "bazelrc", "server_javabase", "host_jvm_args",
		"install_base", "host_jvm_profile", "failure_detail_out", "server_jvm_out", "macos_qos_class",
		"unlimit_coredumps", "preemptible"}
	bazelCommands = []string{"build", "test", "run", "coverage", "query", "cquery", "aquery", "info", "version", "help",
		"clean", "fetch", "sync", "shutdown", "mod", "vendor", "dump", "license", "print_action", "config",
		"analyze-profile", "canonicalize-flags", "mobile-install"}
	// bazelFlags are boolean options (also given as --noNAME or
	// --NAME=true|false); bazelValued take a value.
	bazelFlags = []string{"keep_going", "verbose_failures", "announce_rc", "build_tests_only", "build", "check_up_to_date",
		"cache_test_results", "test_verbose_timeout_warnings", "subcommands", "sandbox_debug", "show_timestamps",
		"show_progress", "progress_in_terminal_title", "expunge", "expunge_async", "async", "show_loading_progress",
		"keep_state_after_build", "test_keep_going", "build_manual_tests", "stamp", "compile_one_dependency",
		"discard_analysis_cache", "implicit_deps", "tool_deps", "incompatible_strict_action_env", "experimental_convenience_symlinks",
		"infer_universe_scope", "nohost_deps", "host_deps", "legacy_important_outputs", "experimental_ui_debug_all_events",
		"explain_verbose", "verbose_explanations", "experimental_check_external_repository_files",
		"test_runner_fail_fast", "zip_undeclared_test_outputs", "build_runfile_links", "enable_bzlmod", "enable_workspace",
		"experimental_remote_cache_compression", "remote_accept_cached", "remote_upload_local_results", "order_results",
		"graph:factored"}
	bazelValued = []string{"compilation_mode", "config", "jobs", "test_output", "test_filter", "test_arg", "test_timeout",
		"test_tag_filters", "build_tag_filters", "test_size_filters", "test_lang_filters", "runs_per_test",
		"flaky_test_attempts", "test_summary", "output", "output_groups", "platforms", "cpu", "host_cpu",
		"target_pattern_file", "order_output", "color", "curses", "show_result", "local_test_jobs", "local_cpu_resources",
		"local_ram_resources", "local_resources", "loading_phase_threads", "symlink_prefix", "aspects", "universe_scope",
		"starlark_cpu_profile", "profile", "build_event_json_file", "build_event_text_file", "build_event_binary_file",
		"execution_log_json_file", "execution_log_binary_file", "execution_log_compact_file", "spawn_strategy", "strategy",
		"worker_max_instances", "java_runtime_version", "tool_java_runtime_version", "java_language_version",
		"tool_java_language_version", "copt", "cxxopt", "conlyopt", "linkopt", "host_copt", "host_cxxopt", "host_linkopt",
		"define", "action_env", "test_env", "repo_env", "host_action_env", "run_under", "workspace_status_command",
		"script_path", "override_repository", "override_module", "registry", "remote_cache", "remote_executor",
		"bes_backend", "bes_results_url", "remote_instance_name", "credential_helper", "google_credentials",
		"disk_cache", "repository_cache", "explain", "ui_event_filters", "experimental_ui_max_stdouterr_bytes",
		"test_sharding_strategy", "instrumentation_filter", "combined_report", "test_strategy", "features",
		"host_features", "check_direct_dependencies", "lockfile_mode", "deleted_packages", "package_path",
		"query_file", "output_file", "max_config_changes_to_show", "progress_report_interval",
		"show_progress_rate_limit", "logging", "experimental_execution_log_file", "heap_dump_on_oom", "test_timeout_filters",
		"android_platforms", "apple_platforms", "ios_multi_cpus", "macos_cpus", "fat_apk_cpu", "extra_execution_platforms",
		"extra_toolchains", "crosstool_top", "host_crosstool_top", "compiler", "dynamic_mode", "fission", "stamp_exec", "repo"}
)

// bazelStartupOpts and bazelCmdOpts are the tables of bazel's startup
// options and of its commands' options, as bazel reads them: long
// options in full, --name=value or the next word (even "--"); a boolean
// also as --noname or --name=true|false|yes|no|1|0 (checked by the
// rule); -c and -j take a value attached (-copt, -j8) or as the next
// word, -k and -s none, one option a word. Startup options end at the command; "--" ends a command's
// options (the words after it are the target's). Flags named
// --incompatible_* are booleans of their own family, taken by the rule.
var (
	bazelStartupOpts = opts{long: bazelStartupValued, flagsLong: bazelStartupFlags, stop: true, exact: true, complete: true}
	bazelCmdOpts     = lazy[opts]{build: func() opts {
		return opts{short: "cj", flags: "ks", long: bazelValued, flagsLong: withNo(bazelFlags),
			exact: true, complete: true, boolValue: true, noCluster: true}
	}}
)

// withNo returns the names and the same names prefixed with "no".
func withNo(names []string) []string {
	out := make([]string, 0, 2*len(names))
	for _, n := range names {
		out = append(out, n, "no"+n)
	}
	return out
}

// bazelBool reports a value bazel takes for a boolean option.
func bazelBool(v string) bool {
	switch v {
	case "true", "false", "yes", "no", "1", "0", "auto":
		return true
	}
	return false
}

// ruleBazel judges bazel: startup options (--bazelrc, --server_javabase,
// --host_jvm_args load code from elsewhere), the command, and its options:
// --run_under and --workspace_status_command run a program, the *_env and
// *opt options pass variables and flags, remote options send the build to
// another machine.
func ruleBazel(a *analyzer, c *call) {
	os, rest := a.scan(bazelStartupOpts, c.args)
	for _, op := range os {
		if op.unknown {
			continue // scan made the command opaque
		}
		name, v := op.name[2:], op.val
		if !slices.Contains(bazelStartupValued, name) || v == (arg{}) {
			continue // a flag, or the value is missing
		}
		switch name {
		case "output_base", "output_user_root", "failure_detail_out", "server_jvm_out":
			a.access(v, c.cwd, true, false)
		case "bazelrc":
			a.access(v, c.cwd, false, false)
			a.opaque(v.sp, "bazel --bazelrc reads "+quote(v.s)+", whose options (--run_under, --action_env) may run any program; they are not read here")
		case "server_javabase", "install_base", "host_jvm_args", "host_jvm_profile":
			a.opaque(v.sp, "bazel --"+name+" makes the Bazel server run another JVM, agent or installation, which is not checked")
		}
	}
	if len(rest) == 0 {
		return
	}
	if rest[0].dyn {
		a.opaque(rest[0].sp, "bazel is given a word built at run time, which may be an option that names a program")
		return
	}
	cmd := rest[0].s
	if !slices.Contains(bazelCommands, cmd) {
		a.opaque(rest[0].sp, "bazel is given the command "+quote(cmd)+", which the analyser does not know")
		return
	}
	// The words after "--" are the target's own arguments.
	cos, ops, _ := a.scanSplit(bazelCmdOpts.get(), append([]arg{{s: "bazel " + cmd, sp: rest[0].sp}}, rest[1:]...))
	for _, x := range ops {
		if x.dyn {
			a.opaque(x.sp, "bazel "+cmd+" is given a word built at run time, which may be an option that names a program")
		}
	}
	cmdOpts := bazelCmdOpts.get()
	for _, op := range cos {
		name := strings.TrimPrefix(op.name, "--")
		flag := slices.Contains(cmdOpts.flagsLong, name) || len(op.name) == 2 && strings.IndexByte(cmdOpts.flags, op.name[1]) >= 0
		if op.unknown {
			family := strings.HasPrefix(name, "incompatible_") || strings.HasPrefix(name, "noincompatible_")
			flag = family && strings.HasPrefix(op.name, "--")
			if !flag {
				a.unknownOpt(c.args[0], op)
				continue
			}
		}
		if flag {
			if op.attached && !bazelBool(op.val.s) {
				a.unknownOpt(c.args[0], op)
			}
			continue
		}
		switch op.name {
		case "-c":
			name = "compilation_mode"
		case "-j":
			name = "jobs"
		}
		if op.val == (arg{}) {
			continue // the value is missing
		}
		a.bazelOption(c, cmd, name, op.val)
	}
	switch cmd {
	case "run":
		a.find(risk.Execute, c.sp, "bazel run builds the target and runs it")
	case "clean":
		a.find(risk.Write, c.sp, "bazel clean deletes the build's outputs")
	case "fetch", "sync", "vendor":
		a.network(c.sp, "bazel "+cmd, "bazel "+cmd+" downloads external repositories")
	}
}

// bazelOption judges one valued option of a bazel command.
func (a *analyzer) bazelOption(c *call, cmd, name string, v arg) {
	if v.dyn {
		a.opaque(v.sp, "bazel --"+name+" is given a value built at run time")
		return
	}
	switch name {
	case "run_under", "workspace_status_command", "credential_helper":
		value := v.s
		if name == "credential_helper" {
			if _, after, ok := strings.Cut(value, "="); ok {
				value = after // host=helper
			}
		}
		if strings.HasPrefix(value, "//") || strings.HasPrefix(value, "@") || strings.HasPrefix(value, ":") {
			a.find(risk.Execute, v.sp, "bazel --"+name+" runs the target "+quote(value)+" of the workspace")
			return
		}
		a.find(risk.Execute, v.sp, "bazel --"+name+" runs "+quote(value))
		a.runValue(sub(v, value), "bazel --"+name, name != "workspace_status_command")
	case "script_path", "profile", "starlark_cpu_profile", "build_event_json_file", "build_event_text_file",
		"build_event_binary_file", "execution_log_json_file", "execution_log_binary_file", "execution_log_compact_file",
		"output_file", "experimental_execution_log_file", "disk_cache", "repository_cache":
		a.access(v, c.cwd, true, false)
	case "target_pattern_file", "query_file":
		a.access(v, c.cwd, false, false)
	case "google_credentials":
		a.access(v, c.cwd, false, false)
	case "override_repository", "override_module":
		_, p, _ := strings.Cut(v.s, "=")
		a.access(sub(v, p), c.cwd, false, false)
		a.find(risk.Execute, v.sp, "bazel --"+name+" builds with the code of "+quote(p)+" instead of the declared dependency")
	case "registry", "remote_cache", "remote_executor", "bes_backend", "bes_results_url":
		a.network(v.sp, "bazel --"+name, "bazel --"+name+" sends the build's sources or results to "+quote(v.s))
	case "define":
		if !simpleValue(v.s) {
			a.opaque(v.sp, "bazel --define "+quote(v.s)+" sets a make variable that genrule commands may run; no rule allows it")
		}
	case "action_env", "test_env", "repo_env", "host_action_env":
		n, val, hasVal := strings.Cut(v.s, "=")
		if hasVal && a.dangerousVar(n, v.sp) {
			a.varCode(n, sub(v, val), v.sp)
		} else if hasVal && !simpleValue(val) && !strings.HasPrefix(val, "/") {
			a.opaque(v.sp, "bazel --"+name+" sets "+n+" to "+quote(val)+" for the build's actions, which may run it")
		}
	case "copt", "cxxopt", "conlyopt", "linkopt", "host_copt", "host_cxxopt", "host_linkopt":
		if !cmakeFlagsOK(v.s) {
			a.opaque(v.sp, "bazel --"+name+" passes "+quote(v.s)+" to the compiler or linker, which may make it load or run other code; no rule allows it")
		}
	case "crosstool_top", "host_crosstool_top", "extra_toolchains", "extra_execution_platforms", "package_path":
		if !strings.HasPrefix(v.s, "//") && !strings.HasPrefix(v.s, "@") {
			a.opaque(v.sp, "bazel --"+name+" takes tools from "+quote(v.s)+", outside the workspace's labels")
		}
	}
}

// ---------------------------------------------------------------- Ninja

// ruleNinja judges ninja: -t runs one of its tools (clean deletes outputs,
// browse serves a web page, msvc runs a command), -f names the build file.
func ruleNinja(a *analyzer, c *call) {
	o := opts{short: "Cfjkldtw", flags: "nvh", flagsLong: []string{"version", "verbose", "quiet", "help"}, complete: true}
	end := len(c.args)
	for i := 1; i < len(c.args); i++ {
		// Ninja stops reading its own options at -t: the rest is the tool's.
		x := c.args[i]
		if x.s == "-t" && i+1 < len(c.args) {
			end = i + 2
			break
		}
		if strings.HasPrefix(x.s, "-t") && len(x.s) > 2 {
			end = i + 1
			break
		}
	}
	os, _ := a.scan(o, c.args[:end])
	cwd := c.cwd
	for _, op := range os {
		v := op.val
		switch op.name {
		case "-C":
			a.access(v, cwd, false, false)
			cwd = a.chdir(v, cwd)
		case "-f":
			if v.s == "-" || strings.HasPrefix(v.s, "/dev/") || strings.HasPrefix(v.s, "/proc/") {
				a.opaque(v.sp, "ninja -f reads its build file from "+quote(v.s)+", whose commands cannot be checked")
			}
			a.access(v, cwd, false, false)
		case "-d":
			switch v.s {
			case "stats", "explain", "keepdepfile", "keeprsp", "nostatcache", "list":
			default:
				a.unknownOpt(c.args[0], op)
			}
		case "-w":
			switch v.s {
			case "dupbuild=err", "dupbuild=warn", "phonycycle=err", "phonycycle=warn", "list":
			default:
				a.unknownOpt(c.args[0], op)
			}
		case "-t":
			a.ninjaTool(c, v, c.args[end:], cwd)
		}
	}
}

// ninjaTool judges ninja -t TOOL ARGS.
func (a *analyzer) ninjaTool(c *call, t arg, args []arg, cwd string) {
	if t.dyn {
		a.opaque(t.sp, "ninja -t is given a tool built at run time")
		return
	}
	switch t.s {
	case "clean", "cleandead":
		a.find(risk.Write, c.sp, "ninja -t "+t.s+" deletes files the build made")
	case "restat", "recompact":
		a.find(risk.Write, c.sp, "ninja -t "+t.s+" rewrites the build log")
	case "browse":
		a.network(c.sp, "ninja -t browse", "ninja -t browse serves the build graph on a web server and opens a browser")
	case "msvc":
		for i, x := range args {
			if x.s == "--" {
				a.find(risk.Execute, x.sp, "ninja -t msvc runs the command after --")
				a.inner(c, args[i+1:], cwd, false)
				return
			}
		}
		a.opaque(t.sp, "ninja -t msvc is given no command after --")
	case "commands", "compdb", "compdb-targets", "deps", "graph", "inputs", "missingdeps", "multi-inputs", "query",
		"rules", "targets", "urtle", "list", "wincodepage":
	default:
		a.opaque(t.sp, "ninja -t "+quote(t.s)+" is a tool the analyser does not know")
	}
}

// ---------------------------------------------------------------- pip

// rulePip: options pip hands to a package's build backend or setup.py
// (--config-settings, --global-option, --build-option) can make it run
// other programs (a compiler launcher, cmake arguments); they are not read.
func rulePip(a *analyzer, c *call) {
	for _, x := range c.args[1:] {
		s := x.s
		if s == "--" {
			break
		}
		name, _, _ := strings.Cut(s, "=")
		switch {
		case longOpt(name, "--config-settings", 10) || name == "--config-setting" || name == "-C" ||
			strings.HasPrefix(s, "-C") && len(s) > 2 && !strings.HasPrefix(s, "--"),
			longOpt(name, "--global-option", 4), longOpt(name, "--build-option", 4), longOpt(name, "--install-option", 5):
			a.opaque(x.sp, "pip "+name+" hands options to the package's build backend or setup.py, which may make it run other programs; no rule allows it")
		}
	}
	rulePackage(a, c)
}
