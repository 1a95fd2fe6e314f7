package web

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawRequest sends one HTTP/1.1 request over a new connection and returns
// the status line.
func rawRequest(t *testing.T, addr, text string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(text)); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the answer to %q: %v", text, err)
	}
	return strings.TrimSpace(line)
}

// Finding 10 of the web review: Go's server answered "OPTIONS *" itself,
// before the guard. It goes through the guard now.
func TestOptionsStarGoesThroughTheGuard(t *testing.T) {
	f := newFixture(t)
	l := serveLog(t, f.log, f.inbox)
	addr := strings.TrimPrefix(l.api, "http://")
	if got := rawRequest(t, addr, "OPTIONS * HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n"); !strings.Contains(got, " 421 ") {
		t.Errorf("OPTIONS * with a foreign Host: %q, want 421", got)
	}
	if got := rawRequest(t, addr, "OPTIONS * HTTP/1.1\r\nHost: "+addr+"\r\nConnection: close\r\n\r\n"); !strings.Contains(got, " 401 ") {
		t.Errorf("OPTIONS * without a token: %q, want 401", got)
	}
}

// Finding 9 of the web review: idle keep-alive connections lived forever
// and were not counted. The server closes idle ones and serves at most
// MaxConns at once.
func TestServerBoundsIdleAndOpenConnections(t *testing.T) {
	hs := HTTPServer(context.Background(), http.NotFoundHandler())
	if hs.IdleTimeout <= 0 || hs.ReadHeaderTimeout <= 0 || !hs.DisableGeneralOptionsHandler {
		t.Errorf("server: IdleTimeout %v, ReadHeaderTimeout %v, DisableGeneralOptionsHandler %v", hs.IdleTimeout, hs.ReadHeaderTimeout, hs.DisableGeneralOptionsHandler)
	}
	f := newFixture(t)
	l := serveLog(t, f.log, f.inbox)
	addr := strings.TrimPrefix(l.api, "http://")
	// MaxConns connections that say nothing hold every slot ...
	var held []net.Conn
	for range MaxConns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	// (the listener has accepted them all: one more request is answered
	// only when a slot frees)
	extra, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	if _, err := extra.Write([]byte("GET /healthz HTTP/1.1\r\nHost: " + addr + "\r\nConnection: close\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = extra.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	if n, _ := extra.Read(make([]byte, 64)); n != 0 {
		t.Fatalf("connection %d was served while %d were open", MaxConns+1, MaxConns)
	}
	// ... and a freed slot serves it.
	held[0].Close()
	_ = extra.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(extra).ReadString('\n')
	if err != nil || !strings.Contains(line, " 204 ") {
		t.Fatalf("after a slot freed: %q %v", line, err)
	}
	for _, c := range held[1:] {
		c.Close()
	}
}

// Web review 5, finding 3: a refusal made before authentication left its
// connection open, so MaxConns idle refused clients held every slot for
// IdleTimeout. Each such refusal says Connection: close and the server
// closes it: more than MaxConns refused clients that keep their
// connections leave the server answering. (The deadline only bounds how
// long a failing run waits for the close.)
func TestRefusedBeforeAuthClosesConnection(t *testing.T) {
	f := newFixture(t)
	l := serveLog(t, f.log, f.inbox)
	addr := strings.TrimPrefix(l.api, "http://")
	refused := []struct{ req, status string }{
		{"GET / HTTP/1.1\r\nHost: a.evil.example:1\r\n\r\n", "421"},
		{"GET /api/sessions HTTP/1.1\r\nHost: " + addr + "\r\n\r\n", "401"},
		{"GET / HTTP/1.1\r\nHost: " + addr + "\r\nOrigin: http://evil.example\r\n\r\n", "403"},
		{"GET /?token=wrong HTTP/1.1\r\nHost: " + addr + "\r\n\r\n", "4"},
		{"GET /api/sessions HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer wrong\r\n\r\n", "401"},
	}
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := range MaxConns + 16 {
		rq := refused[i%len(refused)]
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c) // never closed by the client
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write([]byte(rq.req)); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("connection %d: reading the refusal of %q: %v", i+1, rq.req, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if !strings.HasPrefix(resp.Status, rq.status) || !resp.Close {
			t.Fatalf("connection %d: %q answered %s, Connection: close %v; want %s…, close", i+1, rq.req, resp.Status, resp.Close, rq.status)
		}
		if n, err := br.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Fatalf("connection %d: after the refusal read %d byte(s), %v; want the server to close it", i+1, n, err)
		}
	}
	if got := rawRequest(t, addr, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\nConnection: close\r\n\r\n"); !strings.Contains(got, " 204 ") {
		t.Errorf("/healthz with %d refused clients holding their connections: %q, want 204", len(held), got)
	}
}
