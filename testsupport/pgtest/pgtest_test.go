package pgtest

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestServerLifecycle: a cluster of our own starts on 127.0.0.1, keeps a
// committed row across a crash (SIGKILL) and a restart on the same port,
// and is gone, directory and all, after Close.
func TestServerLifecycle(t *testing.T) {
	s, err := Start()
	if err != nil {
		skipOrFail(t, err)
	}
	defer s.Close()
	ctx := context.Background()
	url := s.CreateDB(t)
	if !strings.Contains(url, "127.0.0.1:") {
		t.Fatalf("URL %s is not on 127.0.0.1", url)
	}
	db := url[strings.LastIndex(url, "/")+1 : strings.Index(url, "?")]
	if err := s.Exec(ctx, db, "CREATE TABLE x (n int)", "INSERT INTO x VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	port := s.Port
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := pgx.Connect(ctx, url); err == nil {
		t.Fatal("connected to a killed server")
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if s.Port != port {
		t.Fatalf("restarted on port %d, was %d", s.Port, port)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var sc string
	if err := conn.QueryRow(ctx, "SELECT n, current_setting('synchronous_commit') FROM x").Scan(&n, &sc); err != nil || n != 42 || sc != "on" {
		t.Fatalf("after the crash: n=%d synchronous_commit=%q err=%v", n, sc, err)
	}
	conn.Close(ctx)
	root := s.root
	s.Close()
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatalf("%s still there after Close: %v", root, err)
	}
}

// TestWrongPasswordRefused: the cluster checks passwords over TCP, so that
// the store's authentication fault can be tested against it.
func TestWrongPasswordRefused(t *testing.T) {
	s := New(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.URLAs(Superuser, "wrong", "postgres"))
	if err == nil {
		conn.Close(ctx)
		t.Fatal("connected with a wrong password")
	}
	if !strings.Contains(err.Error(), "password authentication failed") {
		t.Fatalf("wrong password: %v", err)
	}
}
