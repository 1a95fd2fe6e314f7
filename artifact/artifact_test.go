package artifact

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestPutOpenVerify(t *testing.T) {
	t.Parallel()
	s, err := Open(filepath.Join(t.TempDir(), "artifacts"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Put([]byte("hello\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d != "sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03" {
		t.Fatalf("digest %s", d)
	}
	f, err := s.Open(d)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "hello\n" {
		t.Fatalf("read back %q", b)
	}
	st, _ := os.Stat(f.Name())
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("blob mode %v, want 0600", st.Mode().Perm())
	}
	if err := s.Verify(d); err != nil {
		t.Fatal(err)
	}
	// Same content, same blob, no error.
	if d2, err := s.Put([]byte("hello\n")); err != nil || d2 != d {
		t.Fatalf("second Put: %s %v", d2, err)
	}
	// Tampering is detected.
	os.Chmod(f.Name(), 0o600)
	os.WriteFile(f.Name(), []byte("bye\n"), 0o600)
	if err := s.Verify(d); err == nil || !strings.Contains(err.Error(), "modified") {
		t.Fatalf("Verify of a modified blob: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	s, _ := Open(t.TempDir())
	if _, err := s.Open("sha256:" + strings.Repeat("0", 64)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing blob: %v", err)
	}
	for _, bad := range []string{"", "sha256:xyz", "md5:" + strings.Repeat("0", 32), "sha256:../../etc/passwd" + strings.Repeat("0", 41), "sha256:" + strings.Repeat("A", 64)} {
		if _, err := s.Open(bad); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("Open(%q) = %v, want a digest error", bad, err)
		}
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, _ := Open(dir)
	w, _ := s.Create()
	w.Write([]byte("partial"))
	w.Abort()
	var files []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 0 {
		t.Fatalf("Abort left %v", files)
	}
	if _, err := w.Commit(); err == nil {
		t.Fatal("Commit after Abort succeeded")
	}
}

func TestConcurrentWritersOfOneBlob(t *testing.T) {
	t.Parallel()
	s, _ := Open(t.TempDir())
	content := bytes.Repeat([]byte("x"), 1<<20)
	var wg sync.WaitGroup
	digests := make([]string, 8)
	for i := range digests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := s.Put(content)
			if err != nil {
				t.Error(err)
			}
			digests[i] = d
		}()
	}
	wg.Wait()
	for _, d := range digests[1:] {
		if d != digests[0] {
			t.Fatal("one content, several digests")
		}
	}
	if err := s.Verify(digests[0]); err != nil {
		t.Fatal(err)
	}
}

func TestUnwritableDir(t *testing.T) {
	t.Parallel()
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o600)
	s, err := Open(filepath.Join(blocker, "artifacts"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put([]byte("x")); err == nil || !strings.Contains(err.Error(), "CUSTOM_AGENT_DATA_DIR") {
		t.Fatalf("Put under a file: %v", err)
	}
}

func TestNormalizeDigest(t *testing.T) {
	t.Parallel()
	hex := "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
	for _, in := range []string{"sha256:" + hex, hex, strings.ToUpper(hex), "SHA256:" + strings.ToUpper(hex), " sha256:" + hex + "\n"} {
		if got, err := NormalizeDigest(in); err != nil || got != "sha256:"+hex {
			t.Errorf("NormalizeDigest(%q) = %q, %v", in, got, err)
		}
	}
	for in, says := range map[string]string{
		"":                         "0 hex digits",
		"sha256:":                  "0 hex digits",
		hex[:63]:                   "63 hex digits",
		hex + "0":                  "65 hex digits",
		"sha256:" + hex[:10]:       "10 hex digits",
		"md5:" + hex:               `not "md5"`,
		"sha256:" + hex[:63] + "g": `"g" is not a hex digit`,
		"sha256:sha256:" + hex:     `"s" is not a hex digit`,
		"nope":                     `"n" is not a hex digit`,
	} {
		_, err := NormalizeDigest(in)
		if err == nil || !strings.Contains(err.Error(), "not an artifact digest") || !strings.Contains(err.Error(), says) {
			t.Errorf("NormalizeDigest(%q) = %v, want an error saying %s", in, err, says)
		}
	}
}
