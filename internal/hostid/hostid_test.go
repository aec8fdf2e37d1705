package hostid

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestOriginOfCopy(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	if err := os.WriteFile(a, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	o1, o2 := Origin(a), Origin(a)
	if _, err := FileID(a); err != nil && runtime.GOOS == "windows" {
		t.Skip(err)
	}
	if o1 == "" || o1 != o2 {
		t.Fatalf("one file, origins %q and %q; want one, not empty", o1, o2)
	}
	b := filepath.Join(dir, "b")
	if err := os.WriteFile(b, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if Origin(b) == o1 {
		t.Fatalf("two files, one origin %q", o1)
	}
	if !SameFile(o1, a) || SameFile(o1, b) || SameFile("", a) {
		t.Fatalf("SameFile(%q): a %v, b %v", o1, SameFile(o1, a), SameFile(o1, b))
	}
	if !SameFile("boot=another;"+o1[strings.Index(o1, ";")+1:], a) {
		t.Fatal("another boot, the same file: not the same file")
	}
	if Origin(filepath.Join(dir, "missing")) != "" {
		t.Fatal("a missing file has an origin")
	}
	if runtime.GOOS == "linux" && Boot() == "" {
		t.Fatal("no boot id on Linux")
	}
}
