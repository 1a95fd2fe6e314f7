package shellrisk

import (
	"strings"
	"sync"

	"github.com/custom-agent/custom-agent/permission/risk"
)

func set(names string) map[string]bool {
	m := map[string]bool{}
	for _, f := range strings.Fields(names) {
		m[f] = true
	}
	return m
}

// langSet is the table of each language the analyser reads code of.
// langOf and the pointer comparisons (li == &langs().python) name a
// language by its entry's address, which stays the same.
type langSet struct {
	python, js, jxa, perl, ruby, php, lua, pwsh, osa, tcl, elisp langInfo
}

// langs builds the languages' tables on first use: most commands run no
// interpreter, and building them was a fifth of a millisecond of every
// process start (issue 14).
var langs = sync.OnceValue(func() *langSet {
	l := &langSet{}
	l.python = langInfo{name: "python", cfg: lexPython, codeOpt: "c", valueOpt: "WXQ", concat: "+",
		longValue: set("check-hash-based-pycs"),
		calls: acts(
			kShell, "system@__import__|import|from popen@__import__|import|from os.system os.popen os.popen2 os.popen3 commands.getoutput getoutput@subprocess getstatusoutput@subprocess create_subprocess_shell@asyncio pty.spawn",
			kSpawn, "run@subprocess call@subprocess check_call@subprocess check_output@subprocess Popen@subprocess create_subprocess_exec@asyncio "+
				"os.execv:1 os.execve:1 os.execvp:1 os.execvpe:1 os.execl:1 os.execle:1 os.execlp:1 os.execlpe:1 os.spawnl:1 os.spawnlp:2 os.spawnv:2 os.spawnvp:2 os.posix_spawn:1 os.posix_spawnp:1",
			kDeleteRec, "shutil.rmtree rmtree@shutil distutils.dir_util.remove_tree",
			kDelete, "os.remove os.unlink os.rmdir os.removedirs remove@os unlink@os *.unlink:-1 *.rmdir:-1 send2trash.send2trash",
			kOpen, "open io.open codecs.open builtins.open *.open:-1",
			kRead, "*.read_text:-1 *.read_bytes:-1 *.iterdir:-1 os.listdir os.scandir os.walk",
			kWrite, "*.write_text:-1 *.write_bytes:-1 *.touch:-1 os.truncate",
			kCopy, "shutil.copy shutil.copy2 shutil.copyfile shutil.copytree shutil.move os.rename os.replace",
			kNet, "urllib.request.urlopen urlopen@urllib urllib.request.urlretrieve urlretrieve@urllib urllib.request.Request urllib2.urlopen "+
				"requests.get requests.post requests.put requests.patch requests.delete requests.head requests.options requests.request:1 "+
				"httpx.get httpx.post httpx.put httpx.delete httpx.request:1 http.client.HTTPConnection http.client.HTTPSConnection "+
				"HTTPConnection@http HTTPSConnection@http socket.create_connection connect@socket connect_ex@socket sendto@socket:1 "+
				"ftplib.FTP smtplib.SMTP smtplib.SMTP_SSL telnetlib.Telnet socket.getaddrinfo socket.gethostbyname webbrowser.open",
			kEval, "exec eval compile",
			kImport, "__import__ importlib.import_module import_module@importlib",
			kOpaque, "getattr ctypes.CDLL ctypes.cdll.LoadLibrary marshal.loads pickle.loads pickle.load",
		)}
	js := acts(
		kShell, "exec@child_process execSync@child_process",
		kSpawn, "spawn@child_process spawnSync@child_process execFile@child_process execFileSync@child_process fork@child_process "+
			"Deno.run Deno.Command Bun.spawn Bun.spawnSync",
		kDeleteRec, "rimraf rimraf.sync *.rimraf *.rimrafSync rmdir@rimraf *.removeSync@fs-extra *.emptyDirSync@fs-extra *.deleteSync@del",
		kDelete, "*.rmSync *.rmdirSync *.unlinkSync rm@fs rmdir@fs unlink@fs remove@fs-extra Deno.remove Deno.removeSync",
		kRead, "*.readFileSync readFile@fs *.createReadStream *.readdirSync readdir@fs Deno.readTextFile Deno.readFile Deno.readTextFileSync Deno.readFileSync Bun.file",
		kWrite, "*.writeFileSync writeFile@fs *.appendFileSync appendFile@fs *.createWriteStream Deno.writeTextFile Deno.writeFile Deno.writeTextFileSync Deno.writeFileSync Bun.write",
		kCopy, "*.copyFileSync copyFile@fs *.cpSync *.renameSync rename@fs Deno.copyFile Deno.rename",
		kNet, "fetch http.get https.get http.request https.request get@http|https request@http|https axios axios.get axios.post axios.put axios.request "+
			"net.connect:1 net.createConnection:1 tls.connect:1 connect@net:1 createConnection@net:1 WebSocket XMLHttpRequest Deno.connect Deno.connectTls Bun.connect dns.lookup",
		kEval, "eval Function vm.runInNewContext vm.runInThisContext runInNewContext@vm runInThisContext@vm",
		kImport, "import require",
		kOpaque, "process.binding process.dlopen",
	)
	l.js = langInfo{name: "javascript", cfg: lexJS, codeOpt: "ep", valueOpt: "rC", concat: "+",
		longCode: set("eval print"), longValue: set("require import loader experimental-loader input-type title conditions inspect-port"), calls: js}
	jxa := acts(kShell, "*.doShellScript", kRead, "*.stringWithContentsOfFileEncodingError", kEval, "eval")
	l.jxa = langInfo{name: "javascript for automation", cfg: lexJS, codeOpt: "e", valueOpt: "ls", concat: "+", calls: jxa}
	l.perl = langInfo{name: "perl", cfg: lexPerl, codeOpt: "eE", attached: "MmIxdDFC", lines: true, digits: true, bare: true, concat: ".",
		calls: acts(
			kShell, "system exec readpipe",
			kDeleteRec, "rmtree remove_tree File.Path.rmtree File.Path.remove_tree *.rmtree@File::Path *.remove_tree@File::Path",
			kDelete, "unlink rmdir *.remove:-1",
			kPerlOpen, "open",
			kOpen, "sysopen:1",
			kRead, "read_file *.slurp:-1 *.slurp_utf8:-1 File.Slurp.read_file do require",
			kWrite, "write_file *.spew:-1 *.spew_utf8:-1 File.Slurp.write_file",
			kCopy, "File.Copy.copy File.Copy.move copy@File::Copy move@File::Copy rename",
			kNet, "get@LWP getstore@LWP getprint@LWP mirror@LWP head@LWP LWP.Simple.get *.get@LWP|HTTP::Tiny|Mojo *.post@LWP|HTTP::Tiny|Mojo "+
				"*.request@LWP|HTTP::Tiny *.mirror@HTTP::Tiny IO.Socket.INET.new IO.Socket.IP.new IO.Socket.SSL.new Net.FTP.new Net.SMTP.new Net.HTTP.new inet_aton gethostbyname",
			kEval, "eval",
		)}
	l.ruby = langInfo{name: "ruby", cfg: lexRuby, codeOpt: "e", valueOpt: "rICEF", attached: "WKx", lines: true, bare: true, concat: "+",
		calls: acts(
			kShell, "system exec spawn Kernel.system Kernel.exec Kernel.spawn Process.spawn IO.popen Open3.capture2 Open3.capture2e Open3.capture3 Open3.popen3 Open3.popen2 Open3.popen2e PTY.spawn",
			kDeleteRec, "FileUtils.rm_rf FileUtils.rm_r FileUtils.rmtree FileUtils.remove_dir FileUtils.remove_entry FileUtils.remove_entry_secure *.rm_rf@FileUtils|fileutils *.rm_r@FileUtils|fileutils *.rmtree",
			kDelete, "File.delete File.unlink FileUtils.rm FileUtils.rm_f FileUtils.rmdir FileUtils.remove Dir.rmdir Dir.delete Dir.unlink *.rm_f@FileUtils|fileutils",
			kOpen, "File.open File.new open Kernel.open",
			kRead, "File.read File.readlines File.foreach File.binread IO.read IO.readlines IO.foreach Dir.entries Dir.children load require_relative",
			kWrite, "File.write File.binwrite IO.write FileUtils.touch",
			kCopy, "FileUtils.cp FileUtils.cp_r FileUtils.mv FileUtils.copy FileUtils.move File.rename",
			kNet, "Net.HTTP.get Net.HTTP.get_response Net.HTTP.post Net.HTTP.post_form Net.HTTP.start Net.HTTP.new URI.open TCPSocket.new TCPSocket.open Socket.tcp UDPSocket.new "+
				"HTTParty.get HTTParty.post Faraday.get Faraday.post RestClient.get RestClient.post Excon.get Net.FTP.new Net.SMTP.start",
			kEval, "eval instance_eval class_eval module_eval binding.eval",
			kOpaque, "send public_send __send__ Object.const_get const_get",
		)}
	l.php = langInfo{name: "php", cfg: lexPHP, codeOpt: "rBRE", valueOpt: "dcfFzt", concat: ".", bare: true,
		calls: acts(
			kShell, "shell_exec exec system passthru popen proc_open",
			kSpawn, "pcntl_exec",
			kDelete, "unlink rmdir",
			kMapDelete, "array_map array_walk",
			kOpen, "fopen",
			kRead, "file_get_contents file readfile parse_ini_file highlight_file show_source php_strip_whitespace include include_once require require_once scandir opendir",
			kWrite, "file_put_contents touch",
			kCopy, "copy rename",
			kNet, "curl_init curl_setopt:2 fsockopen pfsockopen stream_socket_client socket_connect:1 get_headers gethostbyname mail SoapClient",
			kDump, "getenv phpinfo",
			kEval, "eval assert create_function",
			kOpaque, "call_user_func call_user_func_array preg_replace_callback dl",
		)}
	l.lua = langInfo{name: "lua", cfg: lexLua, codeOpt: "e", valueOpt: "l", concat: "..", bare: false,
		calls: acts(
			kShell, "os.execute io.popen",
			kDelete, "os.remove",
			kOpen, "io.open",
			kRead, "io.lines io.input dofile loadfile",
			kWrite, "io.output",
			kCopy, "os.rename",
			kNet, "socket.connect socket.tcp *.connect@socket *.request@socket.http|ssl.https http.request",
			kEnv1, "os.getenv",
			kEval, "load loadstring",
			kImport, "require",
		)}
	l.pwsh = langInfo{name: "powershell", cfg: lexPwsh, shell: true, fold: true, concat: "+",
		calls: acts(
			kRead, "system.io.file.readalltext system.io.file.readalllines system.io.file.readallbytes io.file.readalltext io.file.readalllines io.file.readallbytes",
			kWrite, "system.io.file.writealltext system.io.file.writeallbytes system.io.file.appendalltext io.file.writealltext io.file.appendalltext",
			kDelete, "system.io.file.delete io.file.delete",
			kDeleteRec, "system.io.directory.delete io.directory.delete",
			kNet, "*.downloadstring *.downloadfile *.downloaddata *.uploadstring *.uploadfile *.openread system.net.webrequest.create net.webrequest.create system.net.dns.gethostaddresses",
			kDump, "environment.getenvironmentvariables system.environment.getenvironmentvariables",
			kEnv1, "environment.getenvironmentvariable system.environment.getenvironmentvariable",
			kShell, "system.diagnostics.process.start diagnostics.process.start",
		)}
	l.osa = langInfo{name: "applescript", cfg: lexOSA, codeOpt: "e", valueOpt: "ls"}
	l.tcl = langInfo{name: "tcl", cfg: lexTcl, shell: true}
	l.elisp = langInfo{name: "emacs lisp", cfg: lexElisp, lisp: true,
		calls: acts(
			kShell, "shell-command shell-command-to-string async-shell-command call-process-shell-command process-file-shell-command start-process-shell-command:2",
			kSpawn, "call-process process-file process-lines start-process:2 make-process",
			kDelete, "delete-file",
			kDeleteRec, "delete-directory",
			kRead, "find-file find-file-noselect insert-file-contents insert-file-contents-literally load load-file find-file-literally",
			kWrite, "write-file write-region:2 append-to-file:2",
			kCopy, "copy-file rename-file copy-directory",
			kNet, "url-retrieve url-retrieve-synchronously open-network-stream:2 make-network-process",
			kEnv1, "getenv",
			kEval, "eval",
			kOpaque, "funcall apply intern",
		)}
	return l
})

// envWord judges a name that reads the environment: os.environ,
// process.env, ENV, Bun.env.
func (s *codeScan) envWord(i int) {
	t := s.toks[i]
	var base string
	switch s.li {
	case &langs().python:
		base = "os.environ"
		if t.s == "environ" || strings.HasPrefix(t.s, "environ.") {
			base = "environ"
		}
		if strings.HasPrefix(t.s, "os.environb") {
			base = "os.environb"
		}
	case &langs().js:
		base = "process.env"
		if strings.HasPrefix(t.s, "Bun.env") {
			base = "Bun.env"
		}
		if strings.HasPrefix(t.s, "Deno.env.toObject") {
			s.dump(s.tspan(i, i+1), s.what("Deno.env.toObject"))
			return
		}
	case &langs().ruby:
		base = "ENV"
	case &langs().elisp:
		if t.s == "process-environment" && !s.is(i-1, "(") {
			s.dump(s.tspan(i, i+1), s.what("process-environment"))
		}
		return
	default:
		return
	}
	rest, ok := strings.CutPrefix(t.s, base)
	if !ok || rest != "" && rest[0] != '.' {
		return
	}
	sp := s.tspan(i, i+1)
	switch {
	case rest == "" && s.is(i+1, "["):
		if k := i + 2; k < len(s.toks) && s.toks[k].k == 's' && secretName(s.toks[k].s) {
			s.secretVar(sp, s.toks[k].s)
		}
		return
	case rest == "" && (s.word(i-1) == "in" || s.word(i-1) == "env" && s.is(i-1, "=")):
		return
	case rest == ".get" || rest == ".setdefault" || rest == ".pop" || rest == ".fetch" || rest == ".key?" || rest == ".include?" ||
		rest == ".has_key?" || rest == ".delete" || rest == ".store" || rest == ".update" || rest == ".clear":
		if k := i + 2; s.is(i+1, "(") && k < len(s.toks) && s.toks[k].k == 's' && secretName(s.toks[k].s) {
			s.secretVar(sp, s.toks[k].s)
		}
		return
	case rest != "" && s.li == &langs().js:
		// process.env.NAME
		if n := rest[1:]; !strings.Contains(n, ".") && secretName(n) {
			s.secretVar(sp, n)
		}
		if strings.Count(rest, ".") == 1 {
			return
		}
	}
	// The whole environment used as a value, except as the environment of a
	// child process (env=os.environ, {env: process.env, …}, {...process.env}).
	for j := i - 1; j >= 0 && j >= i-4; j-- {
		if s.is(j, "...") || s.is(j, "**") || s.word(j) == "env" || s.word(j) == "environ" {
			return
		}
		if s.is(j, "(") && s.word(j-1) == "dict" {
			if s.word(j-3) == "env" {
				return
			}
		}
	}
	s.dump(sp, s.what(t.s))
}

// envVar judges a variable that reads the environment: perl %ENV and
// $ENV{…}, php $_ENV and $_SERVER, pwsh $env:NAME, tcl $env(NAME).
func (s *codeScan) envVar(i int) {
	t := s.toks[i]
	sp := s.tspan(i, i+1)
	single := func(k int) {
		if k < len(s.toks) && (s.toks[k].k == 's' || s.toks[k].k == 'w') && secretName(s.toks[k].s) {
			s.secretVar(sp, s.toks[k].s)
		}
	}
	switch {
	case s.li == &langs().perl && (t.s == "%ENV" || t.s == "@ENV" && s.is(i+1, "{")):
		s.dump(sp, s.what(t.s))
	case s.li == &langs().perl && t.s == "$ENV" && s.is(i+1, "{"):
		single(i + 2)
	case s.li == &langs().php && (t.s == "$_ENV" || t.s == "$_SERVER"):
		if s.is(i+1, "[") {
			single(i + 2)
			return
		}
		s.dump(sp, s.what(t.s))
	case s.li == &langs().pwsh && len(t.s) > 5 && strings.EqualFold(t.s[:5], "$env:"):
		if secretName(t.s[5:]) {
			s.secretVar(sp, t.s[5:])
		}
	case s.li == &langs().tcl && t.s == "$env" && s.is(i+1, "("):
		single(i + 2)
	}
}

// cmdStart reports whether the word at i starts a command of a
// shell-like language: the first word of a statement, of [ … ] in tcl,
// after | or & in pwsh.
func (s *codeScan) cmdStart(i int) bool {
	if s.toks[i].nl || i == 0 {
		return true
	}
	p := s.toks[i-1]
	if p.k != 'p' {
		return false
	}
	switch p.s {
	case ";", "{", "|", "&", "&&", "||":
		return true
	case "[":
		return s.li == &langs().tcl
	case "(":
		return s.li == &langs().pwsh
	}
	return false
}

// shellArgs returns the words of a command of a shell-like language, up to
// the end of its statement.
func (s *codeScan) shellArgs(i int) ([]lval, []int, int) {
	end := s.stmtEnd(i + 1)
	var vals []lval
	var at []int
	for j := i + 1; j < end && len(vals) < 128; j = s.skip(j) {
		s.step()
		if s.is(j, ",") {
			continue
		}
		vals = append(vals, s.eval(j, s.skip(j), 0))
		at = append(at, j)
	}
	return vals, at, end
}

// command judges a command of pwsh or tcl.
func (s *codeScan) command(i int) {
	if s.li == &langs().tcl {
		s.tclCommand(i)
		return
	}
	name := strings.ToLower(s.toks[i].s)
	if s.is(i+1, "(") || s.is(i+1, "=") {
		if ac, n, ok := s.lookup(name); ok && s.is(i+1, "(") {
			s.act(ac, n, i, i+1)
		}
		return
	}
	vals, at, end := s.shellArgs(i)
	sp := s.tspan(i, end)
	w := s.what(s.toks[i].s)
	// -Name value parameters and positional values.
	params := map[string]lval{}
	var posv []lval
	for k := 0; k < len(vals); k++ {
		s.step()
		t := s.toks[at[k]]
		if t.k == 'w' && strings.HasPrefix(t.s, "-") && len(t.s) > 1 {
			p := strings.ToLower(strings.TrimLeft(t.s, "-"))
			p, v, hasV := strings.Cut(p, ":")
			if hasV {
				params[p] = lval{s: v, ok: true, sp: vals[k].sp}
			} else if k+1 < len(vals) && !(s.toks[at[k+1]].k == 'w' && strings.HasPrefix(s.toks[at[k+1]].s, "-")) && !pwshSwitch(p) {
				params[p] = vals[k+1]
				k++
			} else {
				params[p] = lval{s: "true", ok: true}
			}
			continue
		}
		posv = append(posv, vals[k])
	}
	param := func(names ...string) (lval, bool) {
		for _, n := range names {
			for p, v := range params {
				if len(p) >= 2 && strings.HasPrefix(n, p) || p == n {
					return v, true
				}
			}
		}
		if len(posv) > 0 {
			return posv[0], true
		}
		return lval{}, false
	}
	switch name {
	case "remove-item", "ri", "del", "erase", "rd", "rmdir":
		v, ok := param("path", "literalpath")
		_, rec := params["recurse"]
		_, r := params["r"]
		if ok {
			s.delete(v, sp, w, rec || r)
		}
	case "get-content", "gc", "type", "get-item", "gi", "get-childitem", "gci", "dir", "ls", "import-csv", "import-clixml":
		v, ok := param("path", "literalpath")
		if ok && v.ok && (strings.EqualFold(v.s, "env:") || strings.EqualFold(v.s, "env:\\") || strings.EqualFold(v.s, "env:/")) {
			s.dump(sp, w)
			return
		}
		if ok {
			s.file(v, false, sp, w)
		}
	case "set-content", "sc", "add-content", "ac", "out-file", "export-csv", "new-item", "ni":
		if v, ok := param("path", "filepath", "literalpath"); ok {
			s.file(v, true, sp, w)
		}
	case "copy-item", "cpi", "copy", "move-item", "mi", "move":
		if v, ok := param("path", "literalpath"); ok {
			s.file(v, false, sp, w)
		}
		if v, ok := params["destination"]; ok {
			s.file(v, true, sp, w)
		} else if len(posv) > 1 {
			s.file(posv[1], true, sp, w)
		}
	case "invoke-webrequest", "iwr", "invoke-restmethod", "irm", "wget", "curl", "start-bitstransfer", "test-netconnection", "tnc", "test-connection":
		v, _ := param("uri", "source", "computername")
		s.net(v, posv, sp, w)
		if o, ok := params["outfile"]; ok {
			s.file(o, true, sp, w)
		}
	case "new-object":
		v, _ := param("typename")
		if v.ok && (strings.Contains(strings.ToLower(v.s), "webclient") || strings.Contains(strings.ToLower(v.s), "tcpclient") || strings.Contains(strings.ToLower(v.s), "httpclient")) {
			s.net(lval{}, posv[min(1, len(posv)):], sp, w)
		}
	case "start-process", "saps", "start":
		prog, ok := param("filepath")
		if !ok {
			return
		}
		list := []lval{prog}
		if al, ok := params["argumentlist"]; ok {
			list = append(list, al)
		} else if al, ok := params["args"]; ok {
			list = append(list, al)
		} else if len(posv) > 1 {
			list = append(list, posv[1:]...)
		}
		s.argv(list, sp, w)
	case "invoke-expression", "iex":
		v, ok := param("command")
		if ok && v.ok && s.depth < maxLangDepth {
			s.a.find(risk.Execute, sp, w+" evaluates code, which is scanned as powershell")
			s.a.langCode(s.li, codeSrc{text: v.s, sp: v.sp}, s.c, s.depth+1)
			return
		}
		s.a.opaque(sp, w+" evaluates code built at run time, which cannot be checked")
	case "invoke-command", "icm", "add-type", "import-module", "ipmo", "set-alias", "new-alias":
		s.a.opaque(sp, w+" runs code the analyser does not follow")
	case "get-variable", "gv", "dir env:", "set":
	default:
		if pwshKeyword(name) || strings.Contains(name, "-") || strings.ContainsAny(name, "$:[") {
			return
		}
		// A native program: run with its words.
		s.argv(append([]lval{{s: s.toks[i].s, ok: true, sp: s.tspan(i, i+1)}}, vals...), sp, w)
	}
}

func pwshSwitch(p string) bool {
	switch p {
	case "recurse", "r", "force", "f", "fo", "usebasicparsing", "wait", "nonewwindow", "passthru", "raw", "whatif", "confirm", "verbose", "nop", "noprofile", "rec":
		return true
	}
	return false
}

func pwshKeyword(w string) bool {
	switch w {
	case "if", "else", "elseif", "foreach", "for", "while", "do", "switch", "function", "param", "return", "try", "catch", "finally",
		"throw", "break", "continue", "begin", "process", "end", "filter", "trap", "exit", "class", "using", "until", "in", "echo", "write", "where", "select", "sort", "%", "?":
		return true
	}
	return false
}

// tclCommand judges a tcl command.
func (s *codeScan) tclCommand(i int) {
	name := s.toks[i].s
	vals, _, end := s.shellArgs(i)
	sp := s.tspan(i, end)
	w := s.what(name)
	s.calls++
	opts := func(vs []lval) ([]lval, bool) {
		force := false
		for len(vs) > 0 && vs[0].ok && strings.HasPrefix(vs[0].s, "-") {
			if vs[0].s == "-force" {
				force = true
			}
			if vs[0].s == "--" {
				return vs[1:], force
			}
			vs = vs[1:]
		}
		return vs, force
	}
	switch name {
	case "exec":
		vs, _ := opts(vals)
		var cmd []lval
		for _, v := range vs {
			if v.ok && (v.s == "|" || strings.HasPrefix(v.s, ">") || strings.HasPrefix(v.s, "<") || v.s == "&") {
				if len(cmd) > 0 {
					s.argv(cmd, sp, w)
				}
				cmd = nil
				continue
			}
			cmd = append(cmd, v)
		}
		s.argv(cmd, sp, w)
	case "file":
		if len(vals) < 2 || !vals[0].ok {
			return
		}
		switch vals[0].s {
		case "delete":
			vs, force := opts(vals[1:])
			for _, v := range vs {
				s.delete(v, sp, w, force)
			}
		case "copy", "rename":
			vs, _ := opts(vals[1:])
			if len(vs) >= 2 {
				s.file(vs[0], false, sp, w)
				s.file(vs[len(vs)-1], true, sp, w)
			}
		}
	case "open":
		if len(vals) == 0 {
			return
		}
		v := vals[0]
		if v.ok && strings.HasPrefix(v.s, "|") {
			s.runShell(lval{s: strings.TrimSpace(v.s[1:]), ok: true, sp: v.sp}, sp, w)
			return
		}
		write := len(vals) > 1 && (!vals[1].ok || strings.ContainsAny(vals[1].s, "wa+") || strings.Contains(vals[1].s, "WRONLY") || strings.Contains(vals[1].s, "RDWR"))
		s.file(v, write, sp, w)
	case "source":
		if len(vals) > 0 {
			s.file(vals[len(vals)-1], false, sp, w)
		}
	case "socket":
		vs, _ := opts(vals)
		if len(vs) > 0 && vs[0].ok && vs[0].s == "-server" {
			return
		}
		if len(vs) > 0 {
			s.net(vs[0], vs, sp, w)
		}
	case "http::geturl":
		if len(vals) > 0 {
			s.net(vals[0], vals, sp, w)
		}
	case "array":
		if len(vals) >= 2 && vals[0].ok && (vals[0].s == "get" || vals[0].s == "names") && vals[1].ok && vals[1].s == "env" {
			s.dump(sp, w)
		}
	case "parray":
		if len(vals) >= 1 && vals[0].ok && vals[0].s == "env" {
			s.dump(sp, w)
		}
	case "eval", "uplevel", "subst", "interp", "after", "namespace", "load", "package":
		if name == "package" || name == "namespace" {
			return
		}
		if len(vals) > 0 && vals[len(vals)-1].ok && s.depth < maxLangDepth && (name == "eval" || name == "uplevel" || name == "after") {
			v := vals[len(vals)-1]
			s.a.langCode(s.li, codeSrc{text: v.s, sp: v.sp}, s.c, s.depth+1)
			return
		}
		s.a.opaque(sp, w+" evaluates code the analyser does not follow")
	case "proc", "if", "while", "for", "foreach", "catch", "try":
		// Their bodies are brace words: scan them as code.
		for _, v := range vals {
			if v.ok && strings.ContainsAny(v.s, " \n") && s.depth < maxLangDepth {
				s.a.langCode(s.li, codeSrc{text: v.s, sp: v.sp}, s.c, s.depth+1)
			}
		}
	}
}

// osaStatement judges AppleScript: do shell script EXPR, read POSIX file.
func (s *codeScan) osaStatement(i int) {
	t := s.toks[i]
	switch t.s {
	case "do":
		if s.word(i+1) != "shell" || s.word(i+2) != "script" {
			return
		}
		s.calls++
		end := s.stmtEnd(i + 3)
		// Stop before "with administrator privileges", "password".
		for j := i + 3; j < end; j = s.skip(j) {
			s.step()
			if w := s.word(j); w == "with" || w == "password" || w == "user" || w == "altering" || w == "without" {
				end = j
				break
			}
		}
		v := s.osaExpr(i+3, end)
		s.runShell(v, s.tspan(i, end), s.what("do shell script"))
	case "read", "delete", "open":
		j := i + 1
		if s.is(j, "(") {
			j++
		}
		if s.word(j) == "for" && s.word(j+1) == "access" {
			j += 2
		}
		if s.word(j) == "POSIX" && s.word(j+1) == "file" || s.word(j) == "file" {
			if s.word(j) == "POSIX" {
				j++
			}
			if k := j + 1; k < len(s.toks) && s.toks[k].k == 's' {
				v := s.strVal(s.toks[k])
				w := s.what(t.s + " file")
				end := s.stmtEnd(k)
				write := false
				for x := k; x < end; x++ {
					s.step()
					if s.word(x) == "write" {
						write = true
					}
				}
				if t.s == "delete" {
					s.delete(v, s.tspan(i, k+1), w, true)
				} else {
					s.file(v, write, s.tspan(i, k+1), w)
				}
			}
		}
	case "run":
		if s.word(i+1) == "script" {
			s.a.opaque(s.tspan(i, s.stmtEnd(i)), s.what("run script")+" evaluates code the analyser does not follow")
		}
	}
}

// osaExpr evaluates an AppleScript string expression joined with &.
func (s *codeScan) osaExpr(lo, hi int) lval {
	v := lval{ok: true, sp: s.tspan(lo, hi)}
	var b strings.Builder
	part := lo
	for j := lo; j <= hi; j++ {
		s.step()
		if j == hi || s.is(j, "&") {
			p := s.eval(part, j, 0)
			if j-part == 1 && s.toks[part].k == 'w' {
				p = lval{} // a variable
			}
			v.ok = v.ok && p.ok
			b.WriteString(p.s)
			part = j + 1
		}
		if j < hi && s.toks[j].k == 'w' && (s.toks[j].s == "quoted" || s.toks[j].s == "of") {
			v.ok = false
		}
	}
	v.s = b.String()
	if v.ok && hi-lo == 1 && s.toks[lo].k == 's' {
		v.sp = s.m.valSpan(s.toks[lo])
	}
	return v
}

// lispCall judges (name args…) in emacs lisp.
func (s *codeScan) lispCall(i int) {
	name := s.toks[i].s
	ac, _, ok := s.lookup(name)
	if !ok {
		return
	}
	s.calls++
	end := s.match[i-1]
	if end < 0 {
		end = len(s.toks)
	}
	var pos []lval
	kw := map[string]lval{}
	for j := i + 1; j < end && len(pos) < 64; j = s.skip(j) {
		s.step()
		t := s.toks[j]
		if t.k == 'w' && strings.HasPrefix(t.s, ":") && j+1 < end {
			k := s.skip(j)
			kw[t.s[1:]] = s.lispVal(k)
			j = k
			continue
		}
		pos = append(pos, s.lispVal(j))
	}
	sp := s.tspan(i-1, min(end+1, len(s.toks)))
	w := s.what(name)
	at := func(n int) lval {
		if n < len(pos) {
			return pos[n]
		}
		return lval{sp: sp}
	}
	switch ac.k {
	case kShell:
		s.runShell(at(ac.arg), sp, w)
	case kSpawn:
		switch name {
		case "call-process", "process-file":
			list := []lval{at(0)}
			if len(pos) > 4 {
				list = append(list, pos[4:]...)
			}
			s.argv(list, sp, w)
		case "process-lines":
			s.argv(pos, sp, w)
		case "start-process":
			if len(pos) > 2 {
				s.argv(pos[2:], sp, w)
			}
		case "make-process":
			if c, ok := kw["command"]; ok && c.isList {
				s.argv(c.list, sp, w)
			} else {
				s.a.opaque(sp, w+" runs a command the analyser cannot tell")
			}
		}
	case kDelete:
		s.delete(at(0), sp, w, false)
	case kDeleteRec:
		s.delete(at(0), sp, w, len(pos) > 1 && pos[1].ok && pos[1].s == "t")
	case kRead:
		s.file(at(ac.arg), false, sp, w)
	case kWrite:
		s.file(at(ac.arg), true, sp, w)
	case kCopy:
		s.file(at(0), false, sp, w)
		s.file(at(1), true, sp, w)
	case kNet:
		v := at(ac.arg)
		if h, ok := kw["host"]; ok {
			v = h
		}
		s.net(v, nil, sp, w)
	case kEnv1:
		if v := at(0); v.ok && secretName(v.s) {
			s.secretVar(sp, v.s)
		}
	case kEval, kOpaque:
		s.a.opaque(sp, w+" evaluates code the analyser does not follow")
	}
}

// lispVal evaluates one lisp argument: a string, a list of strings
// '("a" "b") or (list "a" "b"), (expand-file-name "x" "~"), or nil/t.
func (s *codeScan) lispVal(j int) lval {
	t := s.toks[j]
	switch t.k {
	case 's':
		return s.strVal(t)
	case 'w':
		return lval{s: t.s, ok: t.s == "nil" || t.s == "t", sp: s.tspan(j, j+1)}
	}
	if s.is(j, "'") && s.is(j+1, "(") {
		j++
	}
	if s.is(j, "(") && s.match[j] > j {
		end := s.match[j]
		v := lval{isList: true, ok: true, sp: s.tspan(j, end+1)}
		k := j + 1
		if w := s.word(k); w == "list" {
			k++
		} else if w == "expand-file-name" || w == "concat" || w == "file-name-concat" {
			var parts []lval
			for x := k + 1; x < end; x = s.skip(x) {
				s.step()
				parts = append(parts, s.lispVal(x))
			}
			if w == "expand-file-name" && len(parts) == 2 {
				parts[0], parts[1] = parts[1], parts[0]
			}
			if w == "concat" {
				r := lval{ok: true, sp: v.sp}
				for _, p := range parts {
					r.ok = r.ok && p.ok
					r.s += p.s
				}
				return r
			}
			r := joinPath(parts)
			r.sp = v.sp
			return r
		} else if w != "" {
			return lval{sp: v.sp}
		}
		for ; k < end; k = s.skip(k) {
			s.step()
			e := s.lispVal(k)
			v.ok = v.ok && e.ok
			v.list = append(v.list, e)
		}
		return v
	}
	return lval{sp: s.tspan(j, j+1)}
}
