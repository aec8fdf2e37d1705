package storeid

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestFile: processes that ask at once agree on one identity; asking again gives
// it again; a copy of the directory (same random part) gets another.
func TestFile(t *testing.T) {
	dir := t.TempDir()
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			id, err := File(dir)
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] || !strings.HasPrefix(id, "file:") {
			t.Fatalf("identities %q", ids)
		}
	}
	if again, _ := File(dir); again != ids[0] {
		t.Errorf("asked again: %q, want %q", again, ids[0])
	}
	cp := t.TempDir()
	b, err := os.ReadFile(filepath.Join(dir, IdentityFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cp, IdentityFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if other, _ := File(cp); other == ids[0] {
		t.Errorf("a copy of the directory has the original's identity %q", other)
	}
	if m1, m2 := Machine(), Machine(); m1 != m2 {
		t.Errorf("Machine differs between two calls: %d and %d", m1, m2)
	}
}
