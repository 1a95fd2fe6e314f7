package fs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWriteFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		tree    map[string]string
		setup   func(t *testing.T, dir string)
		args    map[string]any
		want    string
		wantErr string
		// after is the tree afterwards: path -> "mode content".
		after map[string]string
	}{
		{name: "creates a file 0644", args: map[string]any{"path": "new.txt", "content": "hello\n"},
			want:  "created new.txt (6 bytes)\n",
			after: map[string]string{"new.txt": "-rw-r--r-- hello\n"}},
		{name: "creates parents", args: map[string]any{"path": "a/b/c.txt", "content": "x"},
			want:  "created a/b/c.txt (1 bytes, and the directories a, a/b)\n",
			after: map[string]string{"a/": "drwxr-xr-x", "a/b/": "drwxr-xr-x", "a/b/c.txt": "-rw-r--r-- x"}},
		{name: "overwrites and keeps the mode", tree: map[string]string{"run.sh": "old\n"},
			setup: func(t *testing.T, dir string) { chmod(t, filepath.Join(dir, "run.sh"), 0o755) },
			args:  map[string]any{"path": "run.sh", "content": "#!/bin/sh\n"},
			want:  "overwrote run.sh (10 bytes; it had 4)\n",
			after: map[string]string{"run.sh": "-rwxr-xr-x #!/bin/sh\n"}},
		{name: "empty content", tree: map[string]string{"f": "old"}, args: map[string]any{"path": "f", "content": ""},
			want: "overwrote f (0 bytes; it had 3)\n", after: map[string]string{"f": "-rw-r--r-- "}},
		{name: "writes through a symbolic link", tree: map[string]string{"real.txt": "old"},
			setup: func(t *testing.T, dir string) { symlink(t, "real.txt", filepath.Join(dir, "link.txt")) },
			args:  map[string]any{"path": "link.txt", "content": "new"},
			want:  "overwrote link.txt (3 bytes; it had 3)\n",
			after: map[string]string{"real.txt": "-rw-r--r-- new", "link.txt": "Lrwxrwxrwx real.txt"}},
		{name: "a directory", tree: map[string]string{"d/": ""}, args: map[string]any{"path": "d", "content": "x"},
			wantErr: "d is a directory; give the path of a file", after: map[string]string{"d/": "drwxr-xr-x"}},
		{name: "a path ending in a slash", args: map[string]any{"path": "d/", "content": "x"},
			wantErr: "d/ names a directory (it ends with /); give the path of a file", after: map[string]string{}},
		{name: "a file in the way of a parent", tree: map[string]string{"f": "x"}, args: map[string]any{"path": "f/g/h.txt", "content": "x"},
			wantErr: "cannot write f/g/h.txt: a directory in its path is a file", after: map[string]string{"f": "-rw-r--r-- x"}},
		{name: "a dangling symbolic link", setup: func(t *testing.T, dir string) { symlink(t, "nowhere", filepath.Join(dir, "dangling")) },
			args:    map[string]any{"path": "dangling", "content": "x"},
			wantErr: "dangling is a symbolic link that leads nowhere (no such file or directory); write to the file by its real name",
			after:   map[string]string{"dangling": "Lrwxrwxrwx nowhere"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			makeTree(t, dir, tc.tree)
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			got, _, err := run(t, &WriteFile{}, dir, tc.args)
			if diff := cmp.Diff(tc.wantErr, errText(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.after, tree(t, dir)); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteFilePermissionDenied(t *testing.T) {
	t.Parallel()
	skipIfRoot(t)
	dir := t.TempDir()
	makeTree(t, dir, map[string]string{"ro/f.txt": "old"})
	chmod(t, filepath.Join(dir, "ro"), 0o555)
	t.Cleanup(func() { chmod(t, filepath.Join(dir, "ro"), 0o755) })
	_, _, err := run(t, &WriteFile{}, dir, map[string]any{"path": "ro/f.txt", "content": "new"})
	if diff := cmp.Diff("cannot write ro/f.txt: permission denied", errText(err)); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"ro/": "dr-xr-xr-x", "ro/f.txt": "-rw-r--r-- old"}, tree(t, dir)); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
}

// tree returns every entry under dir: "mode content" for files, the mode
// for directories, "mode target" for links. Temporary files left behind
// would show here.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			out[rel+"/"] = info.Mode().String()
		case d.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = info.Mode().String() + " " + target
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = info.Mode().String() + " " + string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func chmod(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
