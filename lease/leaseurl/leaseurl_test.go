package leaseurl

import (
	"context"
	"strings"
	"testing"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, bad := range []string{"nope://x", "", "/just/a/path", "redis ://x"} {
		if _, err := Open(context.Background(), bad); err == nil {
			t.Errorf("Open(%q) accepted", bad)
		}
	}
	_, err = Open(context.Background(), "nope://user:secret@host/x")
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("error shows the password or is missing: %v", err)
	}
	if got := Redact("postgres://u:secret@h/db"); strings.Contains(got, "secret") {
		t.Errorf("Redact = %s", got)
	}
}
