package shellrisk

import (
	"net/url"
	"strings"

	"github.com/custom-agent/custom-agent/permission/netrisk"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// httpKind is what the value of a curl or wget option is.
type httpKind uint8

const (
	hFlag       httpKind = iota // takes no value
	hValue                      // takes a value that names nothing to judge
	hData                       // data sent: @file and name=@file read a file
	hSend                       // a file read and sent (upload-file, post-file)
	hReadLocal                  // a file read but not sent (a client certificate)
	hWrite                      // a file written
	hWriteDir                   // a directory files are written into
	hConfig                     // a configuration file, which can set any option
	hNetrcFile                  // a netrc file: passwords
	hNetrc                      // flag: read ~/.netrc
	hCookie                     // a cookie string, or a file of cookies when it has no '='
	hCookieFile                 // a file of cookies
	hHeader                     // a header: a secret in it leaves the machine
	hURL                        // a URL
	hRun                        // a program run (wget --use-askpass)
	hWgetrc                     // a wgetrc command (wget -e)
	hResolve                    // host:port:address (curl --resolve, --connect-to)
	hVariable                   // curl --variable name@file reads a file
	hWriteOut                   // curl -w @file reads the format from a file
	hRemoteName                 // flag: the file is named after the URL (curl -O)
)

type httpOpt struct {
	long  string
	short byte
	kind  httpKind
}

// curlOpts lists curl's options that take a value or matter; options not
// listed are taken as flags. Order matters only for abbreviations: an
// abbreviation matching several entries takes the first.
var curlOpts = [...]httpOpt{
	{"config", 'K', hConfig}, {"netrc-file", 0, hNetrcFile}, {"netrc", 'n', hNetrc}, {"netrc-optional", 0, hNetrc},
	{"data", 'd', hData}, {"data-ascii", 0, hData}, {"data-binary", 0, hData}, {"data-urlencode", 0, hData},
	{"data-raw", 0, hValue}, {"json", 0, hData}, {"form", 'F', hData}, {"form-string", 0, hValue},
	{"expand-data", 0, hData}, {"expand-json", 0, hData}, {"expand-form", 0, hData}, {"expand-url", 0, hURL},
	{"upload-file", 'T', hSend}, {"variable", 0, hVariable}, {"write-out", 'w', hWriteOut},
	{"output", 'o', hWrite}, {"output-dir", 0, hWriteDir}, {"dump-header", 'D', hWrite}, {"trace", 0, hWrite},
	{"trace-ascii", 0, hWrite}, {"cookie-jar", 'c', hWrite}, {"stderr", 0, hWrite}, {"libcurl", 0, hWrite},
	{"etag-save", 0, hWrite}, {"hsts", 0, hWrite}, {"alt-svc", 0, hWrite}, {"etag-compare", 0, hReadLocal},
	{"cookie", 'b', hCookie}, {"header", 'H', hHeader}, {"proxy-header", 0, hHeader},
	{"url", 0, hURL}, {"url-query", 0, hHeader}, {"proxy", 'x', hURL}, {"preproxy", 0, hURL},
	{"resolve", 0, hResolve}, {"connect-to", 0, hResolve},
	{"cert", 'E', hReadLocal}, {"key", 0, hReadLocal}, {"proxy-cert", 0, hReadLocal}, {"proxy-key", 0, hReadLocal},
	{"cacert", 0, hValue}, {"capath", 0, hValue}, {"crlfile", 0, hValue},
	{"head", 'I', hFlag}, {"remote-name", 'O', hRemoteName}, {"remote-name-all", 0, hRemoteName}, {"remote-header-name", 'J', hFlag},
	{"user", 'u', hValue}, {"user-agent", 'A', hValue}, {"continue-at", 'C', hValue}, {"referer", 'e', hValue},
	{"max-time", 'm', hValue}, {"ftp-port", 'P', hValue}, {"quote", 'Q', hValue}, {"range", 'r', hValue},
	{"telnet-option", 't', hValue}, {"proxy-user", 'U', hValue}, {"request", 'X', hValue}, {"speed-time", 'y', hValue},
	{"speed-limit", 'Y', hValue}, {"time-cond", 'z', hValue}, {"cert-type", 0, hValue}, {"key-type", 0, hValue},
	{"connect-timeout", 0, hValue}, {"retry", 0, hValue}, {"retry-delay", 0, hValue}, {"retry-max-time", 0, hValue},
	{"max-redirs", 0, hValue}, {"max-filesize", 0, hValue}, {"limit-rate", 0, hValue}, {"interface", 0, hValue},
	{"dns-servers", 0, hValue}, {"request-target", 0, hValue}, {"oauth2-bearer", 0, hValue}, {"pass", 0, hValue},
	{"ciphers", 0, hValue}, {"compressed-ssh", 0, hFlag}, {"create-dirs", 0, hFlag}, {"location", 'L', hFlag},
	{"aws-sigv4", 0, hValue}, {"parallel-max", 0, hValue}, {"rate", 0, hValue}, {"output-dir-mode", 0, hValue},
}

// wgetOpts lists wget's options that take a value or matter; wget accepts
// unique abbreviations of long options (getopt_long).
var wgetOpts = [...]httpOpt{
	{"execute", 'e', hWgetrc}, {"config", 0, hConfig}, {"use-askpass", 0, hRun},
	{"output-document", 'O', hWrite}, {"output-file", 'o', hWrite}, {"append-output", 'a', hWrite},
	{"directory-prefix", 'P', hWriteDir}, {"input-file", 'i', hSend}, {"post-file", 0, hSend}, {"body-file", 0, hSend},
	{"load-cookies", 0, hCookieFile}, {"save-cookies", 0, hWrite}, {"rejected-log", 0, hWrite}, {"warc-file", 0, hWrite},
	{"hsts-file", 0, hWrite}, {"header", 0, hHeader}, {"certificate", 0, hReadLocal}, {"private-key", 0, hReadLocal},
	{"ca-certificate", 0, hValue}, {"ca-directory", 0, hValue}, {"crl-file", 0, hValue}, {"base", 'B', hValue},
	{"tries", 't', hValue}, {"timeout", 'T', hValue}, {"wait", 'w', hValue}, {"quota", 'Q', hValue},
	{"user-agent", 'U', hValue}, {"level", 'l', hValue}, {"accept", 'A', hValue}, {"reject", 'R', hValue},
	{"domains", 'D', hValue}, {"exclude-directories", 'X', hValue}, {"include-directories", 'I', hValue},
	{"user", 0, hValue}, {"password", 0, hValue}, {"http-user", 0, hValue}, {"http-password", 0, hValue},
	{"ftp-user", 0, hValue}, {"ftp-password", 0, hValue}, {"proxy-user", 0, hValue}, {"proxy-password", 0, hValue},
	{"post-data", 0, hValue}, {"body-data", 0, hValue}, {"method", 0, hValue}, {"referer", 0, hValue},
	{"default-page", 0, hValue}, {"bind-address", 0, hValue}, {"limit-rate", 0, hValue}, {"exclude-domains", 0, hValue},
	{"restrict-file-names", 0, hValue}, {"local-encoding", 0, hValue}, {"remote-encoding", 0, hValue},
	{"dns-timeout", 0, hValue}, {"connect-timeout", 0, hValue}, {"read-timeout", 0, hValue}, {"waitretry", 0, hValue},
	{"cut-dirs", 0, hValue}, {"accept-regex", 0, hValue}, {"reject-regex", 0, hValue}, {"regex-type", 0, hValue},
	{"e-robots", 0, hFlag}, {"n", 'n', hValue},
}

// lookupHTTPOpt finds a long option by name or unique abbreviation (the
// first of the table's matches when several share the prefix).
func lookupHTTPOpt(table []httpOpt, name string) (httpOpt, bool) {
	var first httpOpt
	found := false
	for _, o := range table {
		if o.long == name {
			return o, true
		}
		if !found && len(name) >= 2 && strings.HasPrefix(o.long, name) {
			first, found = o, true
		}
	}
	return first, found
}

func shortHTTPOpt(table []httpOpt, ch byte) (httpOpt, bool) {
	for _, o := range table {
		if o.short == ch {
			return o, true
		}
	}
	return httpOpt{}, false
}

// ruleHTTP: curl and wget fetch and send. The files they send or read are
// read accesses, the files they write are writes, URLs are judged as the
// http tools judge them (file: reads a local file, cloud metadata hands
// out credentials, a secret in a URL or header leaves the machine), and a
// configuration file or wgetrc command can set any option, so it is Opaque.
func ruleHTTP(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	a.network(c.sp, quote(name), name+" transfers data over the network")
	a.netArgs(c, name)
	var table []httpOpt
	switch name {
	case "curl":
		table = curlOpts[:]
	case "wget", "wget2":
		table = wgetOpts[:]
	default:
		ruleHTTPOther(a, c, name)
		return
	}
	wget := table[0].kind == hWgetrc
	args := c.args
	var dirs, outs []arg // output directories; explicit output files
	var urls []arg
	remote := wget // wget names its file after the URL unless -O is given
	onlyURLs := false
	for i := 1; i < len(args); i++ {
		x := args[i]
		s := x.s
		if onlyURLs || x.dyn || len(s) < 2 || s[0] != '-' {
			urls = append(urls, x)
			continue
		}
		if s == "--" {
			onlyURLs = true
			continue
		}
		if strings.HasPrefix(s, "--") {
			n, v, hasVal := strings.Cut(s[2:], "=")
			o, ok := lookupHTTPOpt(table, n)
			if !ok {
				o = httpOpt{long: n, kind: hFlag}
			}
			var val arg
			switch {
			case o.kind == hFlag || o.kind == hNetrc || o.kind == hRemoteName:
			case hasVal:
				val = arg{s: v, dyn: x.dyn, sp: x.sp, w: x.w}
			case i+1 < len(args):
				i++
				val = args[i]
			default:
				continue
			}
			a.httpOpt(name, o, "--"+n, x, val, c, &dirs, &outs, &urls, &remote)
			continue
		}
		for j := 1; j < len(s); j++ {
			o, ok := shortHTTPOpt(table, s[j])
			if !ok || o.kind == hFlag || o.kind == hNetrc || o.kind == hRemoteName {
				if ok {
					a.httpOpt(name, o, "-"+s[j:j+1], x, arg{}, c, &dirs, &outs, &urls, &remote)
				}
				continue
			}
			var val arg
			switch {
			case j+1 < len(s):
				val = arg{s: s[j+1:], dyn: x.dyn, sp: x.sp, w: x.w}
			case i+1 < len(args):
				i++
				val = args[i]
			}
			a.httpOpt(name, o, "-"+s[j:j+1], x, val, c, &dirs, &outs, &urls, &remote)
			break // the rest of the cluster was the value
		}
	}
	for _, u := range urls {
		a.httpURL(name, u)
	}
	// Files written: explicit outputs (joined to the output directory when
	// relative), and with -O (curl) or by default (wget) the URL's last
	// path segment in the output directory.
	if len(dirs) == 0 {
		dirs = []arg{{s: ".", sp: c.sp}}
	}
	for _, d := range dirs {
		if d.s != "." {
			a.access(d, c.cwd, true, false)
		}
		for _, o := range outs {
			if d.s != "." && !o.dyn && !d.dyn && !strings.HasPrefix(o.s, "/") {
				a.access(arg{s: d.s + "/" + o.s, sp: o.sp, w: o.w}, c.cwd, true, false)
			}
		}
		if !remote {
			continue
		}
		for _, u := range urls {
			if base, ok := remoteName(u); ok && !d.dyn {
				a.access(arg{s: d.s + "/" + base, sp: u.sp, w: u.w}, c.cwd, true, false)
			}
		}
	}
	if c.in.kind == inPipe {
		for _, x := range args[1:] {
			if strings.Contains(x.s, "@-") || x.s == "-T" || x.s == "--upload-file" || strings.HasPrefix(x.s, "--post-file") {
				a.find(risk.Network, c.sp, name+" uploads what the command before it prints")
			}
		}
	}
}

// httpOpt judges one option of curl or wget.
func (a *analyzer) httpOpt(name string, o httpOpt, spelled string, x, v arg, c *call, dirs, outs, urls *[]arg, remote *bool) {
	switch o.kind {
	case hNetrc:
		a.credSource(x.sp, "~/.netrc")
		a.find(risk.Credential, x.sp, name+" "+spelled+" sends the passwords stored in ~/.netrc")
		if a.env.Home != "" {
			a.access(arg{s: a.env.Home + "/.netrc", sp: x.sp}, c.cwd, false, false)
		}
	case hRemoteName:
		*remote = true
	case hData:
		if o.long == "data-urlencode" {
			// [name]@file reads the file; [name]=content is sent as is.
			if at := strings.IndexByte(v.s, '@'); at >= 0 && !strings.Contains(v.s[:at], "=") && v.s[at+1:] != "-" {
				a.access(arg{s: v.s[at+1:], dyn: v.dyn, sp: v.sp, w: v.w}, c.cwd, false, false)
			}
		} else {
			a.uploadData(v, c.cwd)
		}
		a.httpSecret(name, spelled, v)
	case hSend, hReadLocal, hCookieFile:
		if v.s == "-" && !v.dyn {
			return
		}
		a.access(v, c.cwd, false, false)
	case hWrite:
		if v.s == "-" && !v.dyn {
			return
		}
		a.access(v, c.cwd, true, false)
		if o.long == "output" || o.long == "output-document" {
			*outs = append(*outs, v)
			*remote = false
		}
	case hWriteDir:
		*dirs = append(*dirs, v)
	case hConfig:
		if v.s != "-" || v.dyn {
			a.access(v, c.cwd, false, false)
		}
		a.opaque(x.sp, name+" "+spelled+" reads options from a file, which can make it read, write or send anything")
	case hWgetrc:
		a.opaque(x.sp, "wget -e runs a wgetrc command, which can set any option (a program to run, files to write)")
	case hRun:
		a.find(risk.Execute, x.sp, "wget --use-askpass runs the given program to ask for a password")
		a.runValue(v, "wget --use-askpass", false)
	case hNetrcFile:
		a.access(v, c.cwd, false, false)
		a.credSource(v.sp, "a netrc file")
		a.find(risk.Credential, v.sp, name+" "+spelled+" sends the passwords stored in a netrc file")
	case hCookie:
		if v.dyn || strings.IndexByte(v.s, '=') < 0 && v.s != "-" {
			a.access(v, c.cwd, false, false)
		}
		a.httpSecret(name, spelled, v)
	case hHeader:
		if strings.HasPrefix(v.s, "@") && v.s != "@-" {
			a.access(arg{s: v.s[1:], dyn: v.dyn, sp: v.sp, w: v.w}, c.cwd, false, false)
		}
		a.httpSecret(name, spelled, v)
	case hURL:
		*urls = append(*urls, v)
	case hResolve:
		// host:port:address[,address...]; brackets around IPv6.
		for _, part := range strings.Split(v.s, ",") {
			if k := strings.LastIndex(part, ":"); k >= 0 && netrisk.MetadataHost(strings.ToLower(part[k+1:])) {
				a.find(risk.Credential, v.sp, name+" "+spelled+" sends the request to a cloud metadata service, which hands out the machine's credentials")
			}
		}
	case hVariable:
		if _, f, ok := strings.Cut(v.s, "@"); ok && f != "-" {
			a.access(arg{s: f, dyn: v.dyn, sp: v.sp, w: v.w}, c.cwd, false, false)
		}
	case hWriteOut:
		if f, ok := strings.CutPrefix(v.s, "@"); ok && f != "-" {
			a.access(arg{s: f, dyn: v.dyn, sp: v.sp, w: v.w}, c.cwd, false, false)
		}
	case hValue:
		if strings.Contains(v.s, "://") {
			a.httpURL(name, v) // a misread option must not hide a URL
		}
	}
}

// httpSecret judges a value sent as is: a secret in it leaves the machine.
func (a *analyzer) httpSecret(name, what string, v arg) {
	if _, _, kind, ok := netrisk.FindSecret(v.s); ok {
		a.credSource(v.sp, kind)
		a.find(risk.Credential, v.sp, name+" "+what+" sends "+kind+", which would leave the machine")
	}
}

// httpURL judges a URL given to curl or wget as the http tools judge one:
// file: reads a local file, a cloud metadata host hands out credentials,
// and a secret in the URL leaves the machine.
func (a *analyzer) httpURL(name string, u arg) {
	s := u.s
	if s == "" {
		return
	}
	if _, _, kind, ok := netrisk.FindSecret(s); ok {
		a.find(risk.Credential, u.sp, name+" sends "+kind+" in its URL, which would leave the machine")
	} else if strings.IndexByte(s, '%') >= 0 {
		if d, err := url.PathUnescape(s); err == nil {
			if _, _, kind, ok := netrisk.FindSecret(d); ok {
				a.find(risk.Credential, u.sp, name+" sends "+kind+" in its URL, which would leave the machine")
			}
		}
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || strings.ContainsAny(scheme, "/?#@") {
		scheme, rest = "", s
		if k := strings.IndexByte(s, ':'); k > 0 && strings.EqualFold(s[:k], "file") {
			scheme, rest = "file", s[k+1:]
		}
	}
	if strings.EqualFold(scheme, "file") {
		if ok {
			rest = "//" + rest
		}
		a.fileURL(name, u, rest)
		return
	}
	if u.dyn && strings.HasPrefix(s, "$") {
		return
	}
	host := rest
	if k := strings.IndexAny(host, "/?#"); k >= 0 {
		host = host[:k]
	}
	if k := strings.LastIndexByte(host, '@'); k >= 0 {
		if strings.IndexByte(host[:k], ':') >= 0 {
			a.find(risk.Credential, u.sp, name+" sends a password written in its URL")
		}
		host = host[k+1:]
	}
	if strings.HasPrefix(host, "[") {
		if k := strings.IndexByte(host, ']'); k > 0 {
			host = host[:k+1]
		}
	} else if k := strings.LastIndexByte(host, ':'); k >= 0 {
		host = host[:k]
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if netrisk.MetadataHost(host) {
		a.credSource(u.sp, "a cloud metadata service")
		a.find(risk.Credential, u.sp, name+" reaches a cloud metadata service ("+quote(host)+"), which hands out the machine's credentials")
	}
}

// fileURL judges a file: URL as a read of its path (rest is what follows
// "file:"): file:///p, file://localhost/p, file:/p.
func (a *analyzer) fileURL(name string, u arg, rest string) {
	if h, ok := strings.CutPrefix(rest, "//"); ok {
		k := strings.IndexByte(h, '/')
		if k < 0 {
			a.opaque(u.sp, name+" reads a local file whose path cannot be told from the URL")
			return
		}
		rest = h[k:]
	}
	if k := strings.IndexAny(rest, "?#"); k >= 0 {
		rest = rest[:k]
	}
	if d, err := url.PathUnescape(rest); err == nil {
		rest = d
	}
	if u.dyn || !strings.HasPrefix(rest, "/") {
		a.opaque(u.sp, name+" reads a local file through a file: URL whose path is only known at run time")
		return
	}
	// curl expands {a,b} and [1-9] in URLs: a pattern names every match.
	glob := u.glob || strings.ContainsAny(rest, "{[*?")
	a.find(risk.Read, u.sp, name+" reads the local file "+quote(rest)+" through a file: URL")
	a.access(arg{s: rest, glob: glob, sp: u.sp, w: u.w}, "/", false, false)
}

// remoteName is the file name curl -O and wget give a download: the last
// segment of the URL's path, or wget's index.html.
func remoteName(u arg) (string, bool) {
	if u.dyn {
		return "", false
	}
	s := u.s
	if _, rest, ok := strings.Cut(s, "://"); ok {
		s = rest
	}
	if k := strings.IndexAny(s, "?#"); k >= 0 {
		s = s[:k]
	}
	k := strings.IndexByte(s, '/')
	if k < 0 {
		return "", false
	}
	s = s[k:]
	base := s[strings.LastIndexByte(s, '/')+1:]
	if d, err := url.PathUnescape(base); err == nil {
		base = d
	}
	if base == "" || base == "." || base == ".." || strings.ContainsAny(base, "/{[") {
		return "", false
	}
	return base, true
}

// ruleHTTPOther handles the other HTTP clients (httpie, xh, aria2c, text
// browsers) with the options they share with curl.
func ruleHTTPOther(a *analyzer, c *call, name string) {
	args := c.args
	for i := 1; i < len(args); i++ {
		s := args[i].s
		v, next, ok := optValue(args, i)
		switch {
		case !strings.HasPrefix(s, "-"):
			a.httpURL(name, args[i])
			if strings.HasPrefix(s, "@") || strings.Contains(s, "=@") || strings.Contains(s, ":=@") || strings.Contains(s, "@/") {
				a.uploadData(args[i], c.cwd)
			}
			continue
		case s == "-o" || s == "--output" || s == "--download-dir" || s == "-d" && name == "aria2c" || strings.HasPrefix(s, "--output=") || strings.HasPrefix(s, "--dir="):
			if ok && v.s != "-" {
				a.access(v, c.cwd, true, false)
			}
		case s == "-i" || s == "--input-file" || strings.HasPrefix(s, "--input-file=") || s == "--session" || s == "--conf-path" || strings.HasPrefix(s, "--conf-path="):
			if ok {
				a.access(v, c.cwd, false, false)
			}
			if strings.HasPrefix(s, "--conf-path") {
				a.opaque(args[i].sp, name+" reads options from a file, which can make it do anything")
			}
		default:
			continue
		}
		if next {
			i++
		}
	}
}
