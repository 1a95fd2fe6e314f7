package shellrisk

import (
	"testing"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// Each pair: the second is the same command as its program reads it (nsenter
// reads -t with strtol: 01, +1 and " 1" are PID 1; compose v2 still takes
// its hidden --workdir DIR), and must be judged at least as the first.
func TestSameCommandNotJudgedLower(t *testing.T) {
	env := Env{Cwd: "/home/u/proj", Home: "/home/u"}
	for _, p := range [][2]string{
		{"nsenter -t 1 -m cat /etc/shadow", "nsenter -t 01 -m cat /etc/shadow"},
		{"nsenter -t 1 -m cat /etc/shadow", "nsenter --target=+1 -m cat /etc/shadow"},
		{"nsenter -t 1 -a sh", "nsenter -t 001 -a sh"},
		{"docker compose run --rm -v /:/host web sh", "docker compose --workdir ps run --rm -v /:/host web sh"},
		{"docker compose exec web cat /etc/shadow", "docker compose --workdir ps exec web cat /etc/shadow"},
	} {
		a, b := Analyze(p[0], env), Analyze(p[1], env)
		t.Logf("%q: %v opaque %v; %q: %v opaque %v", p[0], a.Risk, a.Opaque, p[1], b.Risk, b.Opaque)
		if b.Risk < a.Risk && !b.Opaque {
			t.Errorf("%q is judged %v (%d findings), %q %v", p[1], b.Risk, len(b.Findings), p[0], a.Risk)
		}
	}
}

// review2Cases: compose's and compose exec's option tables are complete
// (an unknown option is opaque, never read as a flag), and nsenter's
// target is read as a number, as nsenter reads it (attacker review 2,
// findings 1 and 2).
var review2Cases = []analyzeCase{
	{name: "compose hidden workdir attached", cmd: "docker compose --workdir=ps exec web cat /etc/shadow", min: C},
	{name: "compose project-directory", cmd: "docker compose --project-directory ps exec web rm -rf /data", min: D},
	{name: "compose dry-run exec", cmd: "docker compose --dry-run exec web cat /etc/shadow", min: C},
	{name: "compose bool flags before ps", cmd: "docker compose --compatibility --all-resources --no-ansi --verbose ps", min: X, exact: true, opaque: -1},
	{name: "compose value flags before ps", cmd: "docker compose --ansi never --progress plain --parallel 2 --profile p --insecure-registry r ps", min: X, exact: true, opaque: -1},
	{name: "compose unknown option", cmd: "docker compose --frobnicate ps exec web sh", min: X, opaque: 1},
	{name: "compose unknown short option", cmd: "docker compose -x ps", min: X, opaque: 1},
	{name: "compose bool flag given a value", cmd: "docker compose --dry-run=false ps", min: X, opaque: 1},
	{name: "compose dynamic subcommand", cmd: `docker compose "$sub" web sh`, min: X, opaque: 1},
	{name: "compose run after options", cmd: "docker compose --env-file .env -p x run --rm --privileged web sh", min: N},
	{name: "compose exec unknown option", cmd: "docker compose exec --frob web cat /etc/shadow", min: X, opaque: 1},
	{name: "compose exec flags", cmd: "docker compose exec -T --index 2 -e A=1 web cat /etc/shadow", min: C},
	{name: "compose exec privileged", cmd: "docker compose exec --privileged web id", min: X},
	{name: "docker-compose workdir", cmd: "docker-compose --workdir ps exec web cat /etc/shadow", min: C},
	{name: "benign compose down", cmd: "docker compose --project-directory . down", min: X, exact: true, opaque: -1},

	{name: "nsenter target space", cmd: "nsenter -t ' 1' -m cat /etc/shadow", min: D},
	{name: "nsenter target pidfd inode", cmd: "nsenter -t 1:4026531836 -m cat /etc/shadow", min: D},
	{name: "nsenter target dynamic", cmd: `nsenter -t "$pid" -m cat /etc/shadow`, min: D},
	{name: "nsenter target unparsable", cmd: "nsenter -t 0x1 -m sh", min: D},
	{name: "nsenter target truncated", cmd: "nsenter -t 4294967297 -m sh", min: D},
	{name: "nsenter target twice", cmd: "nsenter -t 1 -t 5 -m sh", min: D},
	{name: "nsenter root of pid 1", cmd: "nsenter -t 1 -r -n cat /etc/shadow", min: D},
	{name: "nsenter wd of pid 1", cmd: "nsenter -t 1 -w -n sh", min: D},
	{name: "nsenter mount file zero", cmd: "nsenter -m/proc/01/ns/mnt sh", min: D},
	{name: "nsenter mount file other", cmd: "nsenter --mount=/run/host-mnt sh", min: D},
	{name: "nsenter mount file dotdot", cmd: "nsenter --mount=/proc/5/../1/ns/mnt sh", min: D},
	{name: "nsenter other target zeros", cmd: "nsenter -t 0042 -m cat /root/.ssh/id_rsa", min: C},
	{name: "nsenter other target not host", cmd: "nsenter -t 42 -m rm -rf /srv", min: D},
	{name: "nsenter wdns attached", cmd: "nsenter -W/srv -t 42 -m id", min: X, opaque: -1},
	{name: "nsenter wdns bare", cmd: "nsenter -W /srv -t 1 -m sh", min: X, opaque: 1},
	{name: "nsenter net socket", cmd: "nsenter -N 3 -t 1 -m cat /etc/shadow", min: D},
	{name: "nsenter other file", cmd: "nsenter --mount=/proc/42/ns/mnt -t 42 id", min: X},
}

func TestReview2Tables(t *testing.T) {
	t.Parallel()
	for _, tc := range review2Cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkCase(t, tc)
		})
	}
}

// TestNsenterOtherTargetNotHostRoot: a target that is plainly not PID 1
// is judged in that process's namespaces, not as root on the host.
func TestNsenterOtherTargetNotHostRoot(t *testing.T) {
	for _, cmd := range []string{"nsenter -t 42 -m id", "nsenter -t +0042 -a id", "nsenter --mount=/proc/42/ns/mnt -t 42 id", "nsenter -t 1 -n id"} {
		if r := Analyze(cmd, testEnv); r.Risk >= risk.Destructive {
			t.Errorf("Analyze(%q).Risk = %v, want below destructive", cmd, r.Risk)
		}
	}
}
