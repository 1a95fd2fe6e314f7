package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/internal/app"
	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/web"
)

func newServeCmd(g *globalFlags) *cobra.Command {
	var (
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

It listens on 127.0.0.1 only and prints a URL with a token made for this run:
every request but a data-free health check needs it. Another address is
refused unless --allow-remote is given; to reach the UI from another machine,
keep it on loopback and use an SSH tunnel with the same port on both ends:

  ssh -L 7717:127.0.0.1:7717 HOST custom-agent serve --addr 127.0.0.1:7717

docs/web.md explains the security model.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd, g, &f, addr, open, allowRemote, allowHosts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "model of the turns started from the page, as openai:NAME, anthropic:NAME or script:FILE (default: the configuration files, else $CUSTOM_AGENT_MODEL)")
	fl.StringVar(&f.cwd, "cwd", "", "directory a new session from the page starts in unless another is typed (default the current directory)")
	addModeFlag(fl, &f.mode)
	fl.DurationVar(&f.approvalTimeout, approvalTimeoutFlag, 0, "how long a question of a turn started from the page waits for an answer before it is denied (default "+approvalDefault().String()+")")
	fl.BoolVar(&f.noBuiltin, "no-builtin-rules", false, noBuiltinRulesUsage)
	fl.StringVar(&f.sandbox, "sandbox", "", sandboxUsage)
	fl.IntVar(&f.maxSteps, "max-steps", 25, "most model calls in one turn")
	fl.Var(&f.maxOutput, "max-output-bytes", maxOutputUsage)
	fl.DurationVar(&f.modelTimeout, "model-timeout", 0, "how long a model call waits for the server's first byte, and then between two pieces of its answer (default $"+model.TimeoutEnv+", else "+model.DefaultTimeout.String()+")")
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "address to listen on (port 0: any free port)")
	cmd.Flags().BoolVar(&open, "open", false, "open the URL in the browser")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "allow an address other than loopback (prefer an SSH tunnel)")
	cmd.Flags().StringSliceVar(&allowHosts, "allow-host", nil, "with --allow-remote: a Host name[:port] the browser will use, besides the address itself")
	return cmd
}

// listenAddr checks the address serve may listen on: loopback, unless
// allowRemote. It returns a warning to print for a remote address.
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
		return host, port, "", nil
	}
	if !allowRemote {
		return "", "", "", fmt.Errorf("--addr %q is not a loopback address: serve listens on 127.0.0.1 or ::1 only (use an SSH tunnel to reach it from elsewhere, or --allow-remote if you must)", addr)
	}
	return host, port, fmt.Sprintf("custom-agent: warning: listening on %s, not loopback: anyone who can reach it and learns the URL can answer your agents' questions, and the traffic is not encrypted. An SSH tunnel to 127.0.0.1 is safer (docs/web.md).", addr), nil
}

// allowedHosts are the exact Host values the server answers to.
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

func runServe(cmd *cobra.Command, g *globalFlags, f *runFlags, addr string, open, allowRemote bool, extraHosts []string) error {
	ctx, out, errOut := cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	host, _, warning, err := listenAddr(addr, allowRemote)
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
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	token := web.NewToken()
	srv, err := web.New(web.Options{
		Log: log, Artifacts: rt.Artifacts, Token: token, Port: port, Turns: turns,
		Hosts: allowedHosts(host, port, extraHosts),
		Inbox: inboxFor(log), Policy: servePolicy{},
	})
	if err != nil {
		return err
	}
	urlHost := "127.0.0.1"
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() && ip.To4() == nil {
		urlHost = "[" + host + "]"
	} else if ip != nil && !ip.IsUnspecified() {
		urlHost = host
	}
	url := fmt.Sprintf("http://%s:%s/?token=%s", urlHost, port, token)
	fmt.Fprintf(out, "custom-agent serve: open %s\n(the token is new for this run; Ctrl-C stops the server)\n", url)
	if open {
		openBrowser(url, errOut)
	}
	go func() { _ = srv.Run(ctx) }()
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		<-ctx.Done()
		sctx, c := context.WithTimeout(context.Background(), 2*time.Second)
		defer c()
		_ = hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// openBrowser starts the desktop's browser on url; a failure is only said.
func openBrowser(url string, errOut io.Writer) {
	name := "xdg-open"
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		name = "explorer"
	}
	if err := exec.Command(name, url).Start(); err != nil {
		fmt.Fprintf(errOut, "custom-agent: could not open a browser (%s); open the URL above yourself\n", strings.TrimSpace(err.Error()))
	}
}
