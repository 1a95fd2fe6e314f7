package main

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/custom-agent/custom-agent/app"
	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/web"
)

func newServeCmd(g *globalFlags) *cobra.Command {
	var (
		linkTTL     time.Duration
		addr        string
		open        bool
		allowRemote bool
		allowHosts  []string
		f           runFlags
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Open the web approval UI and audit view on this machine",
		Long: `Serve the web UI: every recorded session (newest first, with its state, its
decisions and whether its chain verifies), one queue of every question
waiting for an answer from any custom-agent process on this machine, the
approval dialog, and each session's live timeline.

A prompt typed in the page starts a turn, on a new session or continuing a
recorded one, in this process, with the model run would use (--model, the
configuration files, CUSTOM_AGENT_MODEL); its questions are answered in the
page (none in this terminal), and Cancel stops it. Without a model, serve
still starts and the page says how to configure one.

It listens on 127.0.0.1 (and holds the same port of ::1) and prints a URL
on a random name under .localhost with a token made for this run, which works
once: it gives the browser a cookie for that name only. Scripts use the
Bearer token in the file it names. Every request but a data-free health check
needs one of them. Another address is
refused unless --allow-remote is given; to reach the UI from another machine,
keep it on loopback and use an SSH tunnel with the same port on both ends:

  ssh -L 7717:127.0.0.1:7717 HOST custom-agent serve --addr 127.0.0.1:7717

docs/web.md explains the security model.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd, g, &f, addr, open, allowRemote, allowHosts, linkTTL)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "model of the turns started from the page, as openai:NAME, anthropic:NAME or script:FILE (default: the configuration files, else $CUSTOM_AGENT_MODEL)")
	fl.StringVar(&f.cwd, "cwd", "", "directory a new session from the page starts in unless another is typed (default the current directory)")
	addModeFlag(fl, &f.mode)
	fl.DurationVar(&f.approvalTimeout, approvalTimeoutFlag, 0, "how long a question of a turn started from the page waits for an answer before it is denied (default "+approvalDefault().String()+")")
	fl.BoolVar(&f.noBuiltin, "no-builtin-rules", false, noBuiltinRulesUsage)
	fl.StringVar(&f.sandbox, "sandbox", "", sandboxUsage)
	fl.StringVar(&f.sandboxPrestart, "sandbox-prestart", "", sandboxPrestartUsage)
	fl.IntVar(&f.maxSteps, "max-steps", 25, "most model calls in one turn")
	fl.Var(&f.maxOutput, "max-output-bytes", maxOutputUsage)
	fl.DurationVar(&f.modelTimeout, "model-timeout", 0, "how long a model call waits for the server's first byte, and then between two pieces of its answer (default $"+model.TimeoutEnv+", else "+model.DefaultTimeout.String()+")")
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "address to listen on (port 0: any free port)")
	cmd.Flags().BoolVar(&open, "open", false, "open the URL in the browser")
	cmd.Flags().DurationVar(&linkTTL, "link-ttl", web.DefaultTokenTTL, "how long the printed login link works if nobody opens it (SIGUSR1 prints a fresh one)")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "allow an address other than loopback (prefer an SSH tunnel)")
	cmd.Flags().StringSliceVar(&allowHosts, "allow-host", nil, "with --allow-remote: a Host name[:port] the browser will use, besides the address itself")
	return cmd
}

// listenAddr checks the address serve may listen on: 127.0.0.1 or ::1 (the
// addresses a browser gives LABEL.localhost), unless allowRemote. It
// returns a warning to print for a remote address.
func listenAddr(addr string, allowRemote bool) (host, port, warning string, err error) {
	host, port, err = net.SplitHostPort(addr)
	if err != nil {
		return "", "", "", fmt.Errorf("--addr %q: %w", addr, err)
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	ip := net.ParseIP(host)
	if ip != nil && ip.IsLoopback() {
		if !ip.Equal(net.IPv4(127, 0, 0, 1)) && !ip.Equal(net.IPv6loopback) {
			return "", "", "", fmt.Errorf("--addr %q: serve listens on 127.0.0.1 or ::1 only, the addresses a browser reaches NAME.localhost at (use an SSH tunnel to reach it from elsewhere)", addr)
		}
		return host, port, "", nil
	}
	if !allowRemote {
		return "", "", "", fmt.Errorf("--addr %q is not a loopback address: serve listens on 127.0.0.1 or ::1 only (use an SSH tunnel to reach it from elsewhere, or --allow-remote if you must)", addr)
	}
	return host, port, fmt.Sprintf("custom-agent: warning: listening on %s, not loopback: anyone who can reach it and learns the URL can answer your agents' questions, the traffic is not encrypted, and the cookie is sent to every port of that host. An SSH tunnel to 127.0.0.1 is safer (docs/web.md).", addr), nil
}

// allowedHosts are the exact Host values the server answers to besides the
// UI host (only Bearer requests are authenticated on them).
func allowedHosts(host, port string, extra []string) []string {
	hosts := []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port}
	if ip := net.ParseIP(host); ip != nil && !ip.IsLoopback() && !ip.IsUnspecified() {
		hosts = append(hosts, net.JoinHostPort(host, port))
	}
	for _, h := range extra {
		if _, _, err := net.SplitHostPort(h); err != nil {
			h = net.JoinHostPort(h, port)
		}
		hosts = append(hosts, h)
	}
	return hosts
}

// listenLoopback listens on addr (127.0.0.1 or ::1) and holds the same port
// of the other loopback address too: a browser may try LABEL.localhost at
// either, and another user's server on the other one would get the cookie.
// A port taken on the other address is an error, or, for port 0, a retry.
func listenLoopback(host, port string) ([]net.Listener, error) {
	other := "::1"
	if net.ParseIP(host).To4() == nil {
		other = "127.0.0.1"
	}
	var last error
	for range 20 {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
		if err != nil {
			return nil, err
		}
		_, p, _ := net.SplitHostPort(ln.Addr().String())
		ln2, err := net.Listen("tcp", net.JoinHostPort(other, p))
		if err == nil {
			return []net.Listener{ln, ln2}, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			// No such address here (no IPv6): no one else can listen there.
			return []net.Listener{ln}, nil
		}
		ln.Close()
		last = fmt.Errorf("port %s of %s is taken by another program: it would receive the browser's requests: %w", p, other, err)
		if port != "0" {
			break
		}
	}
	return nil, last
}

// privateDir refuses a data directory another user could change: serve
// keeps its script token and its --open page there, and whoever can
// rename entries in the directory could put their own in their place.
func privateDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("the data directory: %w", err)
	}
	if uid, ok := ownerOf(st); ok && uid != os.Getuid() {
		return fmt.Errorf("the data directory %s belongs to user id %d, not to you: serve keeps its login token there, so it does not start (choose another with --data-dir)", dir, uid)
	}
	if st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("the data directory %s can be changed by other users (mode %04o): serve keeps its login token there, so it does not start (chmod go-w %s, or choose another with --data-dir)", dir, st.Mode().Perm(), dir)
	}
	return nil
}

// writePrivate writes b to a new file readable by the user only, replacing
// any file (or link) there.
func writePrivate(path string, b []byte) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// writeLinkFile writes the login link url to path, readable by the user
// only. It refuses a symbolic link there: the data dir is the user's
// alone (privateDir), so one there was put by someone, or something, to
// send the link elsewhere; it is left for the user to see.
func writeLinkFile(path, url string) error {
	if st, err := os.Lstat(path); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("the login link's file %s is a symbolic link: serve does not write its link there (remove it and start again)", path)
	}
	// writePrivate never follows a link either, should one appear now.
	if err := writePrivate(path, []byte(url+"\n")); err != nil {
		return fmt.Errorf("writing the login link: %w", err)
	}
	return nil
}

// openPage is the file --open gives the browser: it redirects to the token
// URL, so that the URL never appears in a process's argv.
func openPage(url string) []byte {
	e := html.EscapeString(url)
	return []byte(`<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=` + e +
		`"><title>custom-agent serve</title></head><body><p><a href="` + e + `">Open custom-agent serve</a></p></body></html>
`)
}

func runServe(cmd *cobra.Command, g *globalFlags, f *runFlags, addr string, open, allowRemote bool, extraHosts []string, linkTTL time.Duration) error {
	if linkTTL <= 0 {
		return fmt.Errorf("--link-ttl %s: want a positive duration", linkTTL)
	}
	ctx, out, errOut := cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	host, port, warning, err := listenAddr(addr, allowRemote)
	if err != nil {
		return err
	}
	if len(extraHosts) > 0 && !allowRemote {
		return errors.New("--allow-host needs --allow-remote")
	}
	if warning != "" {
		fmt.Fprintln(errOut, warning)
	}
	dir, err := g.resolveDataDir()
	if err != nil {
		return err
	}
	store, err := g.resolveStore()
	if err != nil {
		return err
	}
	foldHookJournalOrWarn(ctx, store, dir, errOut)
	// The runtime the page's turns run in, opened once; its log and
	// artifact store are the ones the pages read.
	changed := cmd.Flags().Lookup(approvalTimeoutFlag).Changed
	timeout, err := chooseApprovalTimeout(changed, f.approvalTimeout, false)
	if err != nil {
		return err
	}
	rt, err := app.OpenWith(ctx, dir, store, timeout)
	if err != nil {
		return err
	}
	defer rt.Close()
	if rt.Recovered > 0 {
		fmt.Fprintf(errOut, "resolved %d question(s) left pending by an earlier process to deny (process restarted)\n", rt.Recovered)
	}
	log := rt.Store
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	turns, err := newServeTurns(ctx, cmd, g, *f, rt)
	if err != nil {
		return err
	}
	// Every turn ends (cancelled with ctx) before the runtime closes.
	defer turns.wait()
	defer cancel()
	if name, _ := turns.Model(); name == "" {
		fmt.Fprintln(errOut, "custom-agent serve: no model is configured, so the page cannot start turns (it says how to configure one)")
	}
	var lns []net.Listener
	remote := net.ParseIP(host) == nil || !net.ParseIP(host).IsLoopback()
	if remote {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("listening on %s: %w", addr, err)
		}
		lns = []net.Listener{ln}
	} else if lns, err = listenLoopback(host, port); err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	for _, ln := range lns {
		defer ln.Close()
	}
	_, port, _ = net.SplitHostPort(lns[0].Addr().String())
	// The browser's host: a random name under .localhost on loopback, so the
	// host-only cookie goes to no other server; the given name when remote.
	uiHost := web.NewHostLabel() + ".localhost:" + port
	if remote {
		// The given name (--allow-host), else the address (127.0.0.1 for
		// 0.0.0.0); there the cookie reaches every port of that host.
		uiHost = net.JoinHostPort(host, port)
		if len(extraHosts) > 0 {
			uiHost = allowedHosts(host, port, extraHosts[:1])[len(allowedHosts(host, port, nil))]
		} else if net.ParseIP(host) != nil && net.ParseIP(host).IsUnspecified() {
			uiHost = "127.0.0.1:" + port
		}
	}
	if err := privateDir(dir); err != nil {
		return err
	}
	token, scriptToken := web.NewToken(), web.NewToken()
	tokenFile := filepath.Join(dir, "serve-"+port+".token")
	if err := writePrivate(tokenFile, []byte(scriptToken+"\n")); err != nil {
		return fmt.Errorf("writing the script token: %w", err)
	}
	defer os.Remove(tokenFile)
	srv, err := web.New(web.Options{
		Log: log, Artifacts: rt.Artifacts, Token: token, ScriptToken: scriptToken, UIHost: uiHost, Turns: turns,
		Hosts: allowedHosts(host, port, extraHosts),
		Inbox: inboxFor(log), Policy: servePolicy{dataDir: dir}, TokenTTL: linkTTL,
	})
	if err != nil {
		return err
	}
	url := fmt.Sprintf("http://%s/?token=%s", uiHost, token)
	scripts := fmt.Sprintf("scripts: Authorization: Bearer $(cat %s) at http://%s; Ctrl-C stops the server",
		tokenFile, net.JoinHostPort(lns[0].Addr().(*net.TCPAddr).IP.String(), port))
	// The login link goes to a terminal only: output kept in a file
	// (nohup.out, a CI log, a pipe into tee) may be where the agent, or
	// another user, reads it. Otherwise it goes to a file readable by
	// the user only in the data dir (the agent's own, denied to the
	// model), and its path is printed.
	linkFile := ""
	if !isTerminal(out) {
		linkFile = filepath.Join(dir, "serve-"+port+".link")
		if err := writeLinkFile(linkFile, url); err != nil {
			return err
		}
		defer os.Remove(linkFile)
		fmt.Fprintf(out, "custom-agent serve: login link saved to %s (not printed: this output is not a terminal, and a file it goes to may be read by the agent or others); open it: cat %s, and paste the link into your browser\n(the link works once, until %s if unused; %s; %s)\n",
			linkFile, linkFile, srv.TokenExpiry().Format("15:04:05"), freshLinkHint(os.Getpid()), scripts)
	} else {
		fmt.Fprintf(out, "custom-agent serve: open %s\n(the link works once, until %s if unused; %s; %s)\n",
			url, srv.TokenExpiry().Format("15:04:05"), freshLinkHint(os.Getpid()), scripts)
	}
	// A fresh link on request (the first expired, or another browser):
	// only this user (or root) can signal serve, and the link goes where
	// the first one went.
	go func() {
		sig := newLinkSignals(ctx)
		for range sig {
			tok, until := srv.NewLink()
			fresh := fmt.Sprintf("http://%s/?token=%s", uiHost, tok)
			if linkFile == "" {
				fmt.Fprintf(out, "custom-agent serve: open %s\n(a fresh link: it works once, until %s if unused; any earlier unused link no longer works)\n",
					fresh, until.Format("15:04:05"))
				continue
			}
			if err := writeLinkFile(linkFile, fresh); err != nil {
				fmt.Fprintf(errOut, "custom-agent serve: no fresh link: %v\n", err)
				continue
			}
			fmt.Fprintf(out, "custom-agent serve: a fresh login link saved to %s (it works once, until %s if unused; any earlier unused link no longer works)\n",
				linkFile, until.Format("15:04:05"))
		}
	}()
	if open {
		page := filepath.Join(dir, "serve-"+port+"-open.html")
		if err := writePrivate(page, openPage(url)); err != nil {
			fmt.Fprintf(errOut, "custom-agent: could not write %s (%v); open the login link yourself\n", page, err)
		} else {
			defer os.Remove(page)
			openBrowser(page, errOut)
		}
	}
	go func() { _ = srv.Run(ctx) }()
	hs := web.HTTPServer(ctx, srv.Handler())
	go func() {
		<-ctx.Done()
		sctx, c := context.WithTimeout(context.Background(), 2*time.Second)
		defer c()
		_ = hs.Shutdown(sctx)
	}()
	errc := make(chan error, len(lns))
	for _, ln := range lns {
		go func() { errc <- hs.Serve(web.LimitListener(ln)) }()
	}
	for range lns {
		if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
			cancel()
			return err
		}
	}
	return nil
}

// openBrowser starts the desktop's browser on a file (never on the token
// URL: argv is readable by every user); a failure is only said.
func openBrowser(file string, errOut io.Writer) {
	name := "xdg-open"
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		name = "explorer"
	}
	if err := exec.Command(name, file).Start(); err != nil {
		fmt.Fprintf(errOut, "custom-agent: could not open a browser (%s); open the login link yourself\n", strings.TrimSpace(err.Error()))
	}
}
