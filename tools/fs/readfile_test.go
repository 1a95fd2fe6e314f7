package fs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A multi-byte rune straddling the 8 KiB sniff boundary must not make
	// the file look binary.
	boundary := strings.Repeat("a", sniffLen-1) + "é\n"
	makeTree(t, dir, map[string]string{
		"five.txt":     "one\ntwo\nthree\nfour\nfive\n",
		"nonl.txt":     "a\nb",
		"crlf.txt":     "a\r\nb\r\n",
		"empty.txt":    "",
		"long.txt":     strings.Repeat("x", 100) + "\nshort\n",
		"nul.bin":      "PNG\x00\x01\x02",
		"latin1.txt":   "caf\xe9\n",
		"boundary.txt": boundary,
		"late.txt":     strings.Repeat("ok\n", sniffLen) + "bad \xff here\n",
		"sub/x.txt":    "in sub\n",
		"sub/dir/":     "",
	})
	tests := []struct {
		name     string
		reader   ReadFile
		args     map[string]any
		want     string
		wantErr  string
		wantSumm string
	}{
		{name: "whole file", args: map[string]any{"path": "five.txt"},
			want:     "     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour\n     5\tfive\n",
			wantSumm: `{"totalLines":5,"offset":0,"lines":5,"truncated":false}`},
		{name: "offset and limit", args: map[string]any{"path": "five.txt", "offset": 1, "limit": 2},
			want:     "     2\ttwo\n     3\tthree\n[showed lines 2-3 of 5; to read on, call read_file with offset 3]\n",
			wantSumm: `{"totalLines":5,"offset":1,"lines":2,"truncated":true,"nextOffset":3}`},
		{name: "json numbers", args: map[string]any{"path": "five.txt", "offset": float64(4), "limit": json.Number("3")},
			want: "     5\tfive\n"},
		{name: "limit reaching the end is not truncation", args: map[string]any{"path": "five.txt", "offset": 3, "limit": 2},
			want: "     4\tfour\n     5\tfive\n"},
		{name: "last line without newline", args: map[string]any{"path": "nonl.txt"},
			want: "     1\ta\n     2\tb\n"},
		{name: "crlf kept", args: map[string]any{"path": "crlf.txt"},
			want: "     1\ta\r\n     2\tb\r\n"},
		{name: "empty file", args: map[string]any{"path": "empty.txt"},
			want: "[the file is empty]\n"},
		{name: "offset past the end", args: map[string]any{"path": "five.txt", "offset": 900},
			wantErr: "offset 900 is past the end of five.txt (5 lines); offsets count lines from 0, so the last line is at offset 4"},
		{name: "offset at the end", args: map[string]any{"path": "five.txt", "offset": 5},
			wantErr: "offset 5 is past the end of five.txt (5 lines); offsets count lines from 0, so the last line is at offset 4"},
		{name: "long line cut", reader: ReadFile{MaxLineBytes: 10}, args: map[string]any{"path": "long.txt"},
			want: "     1\txxxxxxxxxx […line cut: 10 of 100 bytes shown]\n     2\tshort\n"},
		{name: "rune across the line cut", reader: ReadFile{MaxLineBytes: sniffLen}, args: map[string]any{"path": "boundary.txt"},
			want: "     1\t" + boundary[:sniffLen-1] + " […line cut: 8191 of 8193 bytes shown]\n"},
		{name: "output capped", reader: ReadFile{MaxBytes: 30}, args: map[string]any{"path": "five.txt"},
			want:     "     1\tone\n     2\ttwo\n[showed lines 1-2 of 5 (output capped at 30 bytes); to read on, call read_file with offset 2]\n",
			wantSumm: `{"totalLines":5,"offset":0,"lines":2,"truncated":true,"nextOffset":2}`},
		{name: "binary file", args: map[string]any{"path": "nul.bin"},
			wantErr: "nul.bin looks like a binary file (a NUL byte at offset 3); read_file shows text only: use shell (e.g. `xxd nul.bin | head`) to inspect it"},
		{name: "not utf-8", args: map[string]any{"path": "latin1.txt"},
			wantErr: "latin1.txt looks like a binary file (bytes that are not UTF-8 at offset 3); read_file shows text only: use shell (e.g. `xxd latin1.txt | head`) to inspect it"},
		{name: "rune across the sniff boundary", reader: ReadFile{MaxLineBytes: 2 * sniffLen}, args: map[string]any{"path": "boundary.txt"},
			want: "     1\t" + boundary},
		{name: "bad bytes after the sniff shown as U+FFFD", args: map[string]any{"path": "late.txt", "offset": sniffLen},
			want: "  8193\tbad \uFFFD here\n"},
		{name: "directory", args: map[string]any{"path": "sub"},
			wantErr: "sub is a directory; use list_files to see what it holds"},
		{name: "missing file", args: map[string]any{"path": "sub/nope.txt"},
			wantErr: "sub/nope.txt does not exist; check the name with list_files"},
		{name: "file under a file", args: map[string]any{"path": "five.txt/x"},
			wantErr: "five.txt/x: not a directory"},
		{name: "absolute path", args: map[string]any{"path": filepath.Join(dir, "sub", "x.txt")},
			want: "     1\tin sub\n"},
		{name: "dot-dot left to the kernel", args: map[string]any{"path": "sub/../five.txt", "limit": 1},
			want: "     1\tone\n[showed lines 1-1 of 5; to read on, call read_file with offset 1]\n"},
		{name: "empty path", args: map[string]any{"path": ""},
			wantErr: "the path is empty; give a file path relative to the working directory or absolute"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, res, err := run(t, &tc.reader, dir, tc.args)
			if diff := cmp.Diff(tc.wantErr, errText(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if tc.wantSumm != "" {
				if diff := cmp.Diff(tc.wantSumm, string(res.Summary)); diff != "" {
					t.Errorf("summary (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestReadFileHugeFileCapped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b strings.Builder
	for range 200_000 {
		b.WriteString("a line of a big file\n")
	}
	makeTree(t, dir, map[string]string{"big.txt": b.String()})
	got, res, err := run(t, &ReadFile{}, dir, map[string]any{"path": "big.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > 256<<10+200 {
		t.Errorf("output is %d bytes, want about 256 KiB", len(got))
	}
	var sum readSummary
	if err := json.Unmarshal(res.Summary, &sum); err != nil {
		t.Fatal(err)
	}
	wantNote := "[showed lines 1-" + itoa(sum.Lines) + " of 200000 (output capped at 256 KiB); to read on, call read_file with offset " + itoa(sum.Lines) + "]\n"
	if !strings.HasSuffix(got, wantNote) {
		t.Errorf("output ends %q, want %q", got[len(got)-200:], wantNote)
	}
	if !sum.Truncated || sum.TotalLines != 200_000 || sum.NextOffset != sum.Lines {
		t.Errorf("summary %+v", sum)
	}
}

func TestReadFileNotRegular(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	_, _, err := run(t, &ReadFile{}, dir, map[string]any{"path": "pipe"})
	if diff := cmp.Diff("pipe is not a regular file (p---------); only regular files can be read", errText(err)); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

func TestReadFilePermissionDenied(t *testing.T) {
	t.Parallel()
	skipIfRoot(t)
	dir := t.TempDir()
	makeTree(t, dir, map[string]string{"secret.txt": "x\n"})
	if err := os.Chmod(filepath.Join(dir, "secret.txt"), 0); err != nil {
		t.Fatal(err)
	}
	_, _, err := run(t, &ReadFile{}, dir, map[string]any{"path": "secret.txt"})
	if diff := cmp.Diff("permission denied: secret.txt cannot be accessed by this process (permission denied)", errText(err)); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
