package permission_test

import (
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// TestURLRuleNormalForm is white-box review B5 and its variations: a URL
// rule's path glob is matched against the URL's normal form, and a URL
// that has none is never allowed by it.
func TestURLRuleNormalForm(t *testing.T) {
	t.Parallel()
	me := permission.Rule{ID: "gh-me", Tool: "http_get", URL: "api.github.com/repos/me/**", Decision: permission.Allow}
	allowed := outcome{permission.Allow, risk.Network, permission.FromOverride, "gh-me"}
	asked := outcome{permission.Ask, risk.Network, permission.FromDefault, ""}
	tests := []struct {
		url       string
		rule      permission.Rule
		want      outcome
		reasonHas string
	}{
		// Under the rule.
		{url: "https://api.github.com/repos/me/x", want: allowed},
		{url: "https://API.GitHub.COM/repos/me/x", want: allowed},
		{url: "https://api.github.com:443/repos/me/x", want: allowed},
		{url: "https://api.github.com./repos/me/x", want: allowed},
		{url: "https://api.github.com/repos/%6De/x", want: allowed},
		{url: "https://api.github.com/repos/me/a/../b", want: allowed},
		{url: "https://api.github.com/repos/me/./b", want: allowed},
		{url: "https://api.github.com/repos/me/x#../../../user", want: allowed},
		{url: "https://api.github.com/repos/me/x?path=../../user", want: allowed},
		{url: "https://api.github.com/repos/me/group%2Fproject", want: allowed},
		// Dot segments resolved: outside the rule.
		{url: "https://api.github.com/repos/me/../../user/keys", want: asked},
		{url: "https://api.github.com/repos/me/%2e%2e/%2e%2e/user/keys", want: asked},
		{url: "https://api.github.com/repos/me/%2E%2e/%2e%2E/user/keys", want: asked},
		{url: "https://api.github.com/repos/me/.%2e/.%2E/user/keys", want: asked},
		{url: "https://api.github.com/repos/me/%2e./%2e./user/keys", want: asked},
		{url: "https://api.github.com/repos/me/x/../../../user/keys", want: asked},
		{url: "https://api.github.com/repos/me/..", want: asked},
		{url: "https://api.github.com/repos/meow/x", want: asked},
		{url: "https://api.github.com/repos/me", want: allowed}, // "dir/**" holds dir itself
		// No single normal form: never allowed, whatever the rule.
		{url: `https://api.github.com/repos/me/x/..\..\..\user/keys`, want: asked, reasonHas: "no single meaning"},
		{url: "https://api.github.com/repos/me/x/..%5c..%5c..%5cuser/keys", want: asked, reasonHas: "no single meaning"},
		{url: "https://api.github.com/repos/me/x/..%5C..%5C..%5Cuser/keys", want: asked, reasonHas: "no single meaning"},
		{url: "https://api.github.com/repos/me/..;/..;/user/keys", want: asked, reasonHas: "no single meaning"},
		{url: "https://api.github.com/repos/me/x/..;x=1/..;/..;/user/keys", want: asked, reasonHas: "no single meaning"},
		{url: "https://api.github.com/repos/me/%252e%252e/%252e%252e/user/keys", want: asked, reasonHas: "decodes it twice"},
		{url: "https://api.github.com/repos/me/%25252e%25252e/%25252e%25252e/user/keys", want: asked, reasonHas: "no single meaning"},
		{url: "https://api.github.com/repos/me/%%32%65%%32%65/x", want: asked},
		{url: "https://api.github.com/repos/me/x/..%2f..%2f..%2fuser/keys", want: asked, reasonHas: "no single meaning"},
		{url: "https://api.github.com/repos/me/x/%2e%2e%2f%2e%2e%2f%2e%2e%2fuser/keys", want: asked, reasonHas: "no single meaning"},
		{url: "https://api.github.com/repos/me/%c0%ae%c0%ae/%c0%ae%c0%ae/user/keys", want: asked, reasonHas: "overlong"},
		{url: "https://api.github.com/repos/me/%ef%bc%8e%ef%bc%8e/%ef%bc%8e%ef%bc%8e/user/keys", want: asked, reasonHas: "no single meaning"},
		{url: "https://api.github.com/repos/me/\u2025/\u2025/user/keys", want: asked, reasonHas: "no single meaning"},
		{url: "https://api.github.com/repos/me/..%00/..%00/user/keys", want: asked, reasonHas: "no single meaning"},
		{url: "https://api.github.com/repos/me/.../x", want: asked, reasonHas: "no single meaning"},
		{url: "https://api.github.com/repos/me/..%20/..%20/user", want: asked, reasonHas: "no single meaning"},
		// Hosts.
		{url: "https://api.github.com.evil.example/repos/me/x", want: asked},
		{url: "https://api.github.com@evil.example/repos/me/x", want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}},
		{url: "http://api.github.com/repos/me/x", want: allowed},
		{url: "https://api.github.com:8443/repos/me/x", want: allowed},
		{url: "https://api.github.com:8443/repos/me/x", rule: permission.Rule{ID: "p", Tool: "http_get", URL: "https://api.github.com:443/repos/me/**", Decision: permission.Allow}, want: asked},
		{url: "https://api.github.com/repos/me/x", rule: permission.Rule{ID: "p", Tool: "http_get", URL: "https://api.github.com:443/repos/me/**", Decision: permission.Allow},
			want: outcome{permission.Allow, risk.Network, permission.FromOverride, "p"}},
		{url: "https://api.github.com:0443/repos/me/x", rule: permission.Rule{ID: "p", Tool: "http_get", URL: "https://api.github.com:443/repos/me/**", Decision: permission.Allow},
			want: outcome{permission.Allow, risk.Network, permission.FromOverride, "p"}},
		{url: "https://xn--bcher-kva.example/a", rule: permission.Rule{ID: "idn", Tool: "http_get", URL: "bücher.example/a", Decision: permission.Allow},
			want: outcome{permission.Allow, risk.Network, permission.FromOverride, "idn"}},
		{url: "https://BÜCHER.example/a", rule: permission.Rule{ID: "idn", Tool: "http_get", URL: "xn--bcher-kva.example/a", Decision: permission.Allow},
			want: outcome{permission.Allow, risk.Network, permission.FromOverride, "idn"}},
		{url: "https://api.github.com/repos/~me/x", rule: permission.Rule{ID: "t", Tool: "http_get", URL: "api.github.com/repos/%7Eme/**", Decision: permission.Allow},
			want: outcome{permission.Allow, risk.Network, permission.FromOverride, "t"}},
		// A deny rule still matches a URL without a normal form, by host.
		{url: "https://evil.example/a/..;/b", rule: permission.Rule{ID: "no-evil", Tool: "http_get", URL: "evil.example", Decision: permission.Deny},
			want: outcome{permission.Deny, risk.Network, permission.FromOverride, "no-evil"}},
		{url: "https://EVIL.example./x/../../b", rule: permission.Rule{ID: "no-evil", Tool: "http_get", URL: "evil.example/b", Decision: permission.Deny},
			want: outcome{permission.Deny, risk.Network, permission.FromOverride, "no-evil"}},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			t.Parallel()
			rule := tt.rule
			if rule.ID == "" {
				rule = me
			}
			d := permission.Engine{}.Check(newReq(t, "http_get", args{"url": tt.url}, withRules(t, rule)))
			if got := outcomeOf(d); got != tt.want {
				t.Errorf("got %+v, want %+v (reason %q)", got, tt.want, d.Reason)
			}
			if tt.reasonHas != "" && !strings.Contains(d.Reason, tt.reasonHas) {
				t.Errorf("reason %q does not say %q", d.Reason, tt.reasonHas)
			}
		})
	}
}

func TestURLRuleCompile(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"api.github.com/repos/../user/**", "api.github.com/repos/./x", "api.github.com/a/%2e%2E/b", "api.github.com:99999/x", "ex..ample.com/x"} {
		if _, err := permission.Compile([]permission.Rule{{ID: "r", Level: permission.LevelUser, Tool: "http_get", URL: u, Decision: permission.Allow}}); err == nil {
			t.Errorf("Compile(url %q) accepted it", u)
		}
	}
	for _, u := range []string{"api.github.com/repos/me/**", "*.example.com", "https://[::1]:8080/x", "bücher.example/a", "api.github.com/a/.well-known/**"} {
		if _, err := permission.Compile([]permission.Rule{{ID: "r", Level: permission.LevelUser, Tool: "http_get", URL: u, Decision: permission.Allow}}); err != nil {
			t.Errorf("Compile(url %q): %v", u, err)
		}
	}
}

// TestMetadataByName is issue 9 §4 "Cloud metadata by name": names that
// resolve to a metadata address, and the other clouds' addresses, are
// judged like 169.254.169.254.
func TestMetadataByName(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"http://169.254.169.254.nip.io/latest/meta-data/",
		"http://app.169.254.169.254.nip.io/",
		"http://169-254-169-254.sslip.io/latest/",
		"http://a9fea9fe.nip.io/latest/",
		"http://app-a9fea9fe.nip.io/latest/",
		"http://7f000001.a9fea9fe.rbndr.us/latest/",
		"http://make-1.2.3.4-rebind-169.254.169.254-rr.1u.ms/latest/",
		"http://169.254.169.254.xip.io/",
		"http://169.254.169.254.evil.example/",
		"http://fd00-ec2--254.sslip.io/latest/",
		"http://metadata/computeMetadata/v1/",
		"http://metadata.google.internal/computeMetadata/v1/",
		"http://METADATA.Google.Internal./computeMetadata/v1/",
		"http://ｍｅｔａｄａｔａ.google.internal/computeMetadata/v1/",
		"http://１６９.２５４.１６９.２５４/latest/",
		"http://instance-data/latest/meta-data/",
		"http://instance-data.ec2.internal/latest/meta-data/",
		"http://metadata.tencentyun.com/latest/meta-data/",
		"http://192.0.0.192/latest/",
		"http://100.100.100.200/latest/meta-data/",
		"http://[fd00:ec2::254]/latest/meta-data/",
		"http://[fd20:ce::254]/computeMetadata/v1/",
		"http://[::ffff:a9fe:a9fe]/latest/",
		"http://[64:ff9b::169.254.169.254]/latest/",
		"http://[::169.254.169.254]/latest/",
		"http://169.254.170.2/v2/credentials/",
		"http://168.63.129.16/machine?comp=goalstate",
		"http://0251.0376.0251.0376/",
		"http://169.254.169.254:80/latest/",
		"http://169.254.169.254/a/..;/latest/",
	} {
		d := permission.Engine{}.Check(newReq(t, "http_get", args{"url": u}))
		if d.RiskAtDecision != risk.Credential || d.Decision == permission.Allow {
			t.Errorf("%s: %s at %s, want credential (reason %q)", u, d.Decision, d.RiskAtDecision, d.Reason)
		}
	}
	for _, u := range []string{
		"https://nip.io/", "https://sslip.io/", "https://example.com/169/254", "https://api.github.com/repos/a9fea9fe/x",
		"https://v1-2-3-4.example.com/", "https://metadata.example.com/", "https://deadbeef.example.com/", "https://10.0.0.1.nip.io/",
	} {
		d := permission.Engine{}.Check(newReq(t, "http_get", args{"url": u}))
		if d.RiskAtDecision > risk.Network {
			t.Errorf("%s: %s at %s, want network at most (reason %q)", u, d.Decision, d.RiskAtDecision, d.Reason)
		}
	}
	d := permission.Engine{}.Check(newReq(t, "http_get", args{"url": "http://10.0.0.1.nip.io/"}))
	if !strings.Contains(d.Reason, "wildcard DNS") {
		t.Errorf("10.0.0.1.nip.io: reason %q does not say it resolves to a private address", d.Reason)
	}
}

// TestMetadataNeedsItsOwnHost: an allow rule for a wildcard-DNS domain
// does not loosen a call that reaches a metadata service through it; a
// rule naming the metadata host itself does.
func TestMetadataNeedsItsOwnHost(t *testing.T) {
	t.Parallel()
	wild := permission.Rule{ID: "nip", Tool: "http_get", URL: "*.nip.io", Decision: permission.Allow}
	for _, u := range []string{"http://169.254.169.254.nip.io/latest/", "http://a9fea9fe.nip.io/", "http://app-169-254-169-254.nip.io/"} {
		d := permission.Engine{}.Check(newReq(t, "http_get", args{"url": u}, withRules(t, wild)))
		if d.Decision != permission.Deny || d.RiskAtDecision != risk.Credential {
			t.Errorf("%s under *.nip.io: %s at %s, want deny at credential (reason %q)", u, d.Decision, d.RiskAtDecision, d.Reason)
		}
	}
	d := permission.Engine{}.Check(newReq(t, "http_get", args{"url": "http://app.10.0.0.1.nip.io/"}, withRules(t, wild)))
	if d.Decision != permission.Allow {
		t.Errorf("app.10.0.0.1.nip.io under *.nip.io: %s (reason %q), want allow", d.Decision, d.Reason)
	}
	own := permission.Rule{ID: "gce", Tool: "http_get", URL: "metadata.google.internal/computeMetadata/v1/project/**", Decision: permission.Allow}
	d = permission.Engine{}.Check(newReq(t, "http_get", args{"url": "http://metadata.google.internal/computeMetadata/v1/project/project-id"}, withRules(t, own)))
	if d.Decision != permission.Allow {
		t.Errorf("a rule naming the metadata host: %s (reason %q), want allow", d.Decision, d.Reason)
	}
}
