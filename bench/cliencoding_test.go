package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	bwsnow "github.com/bwmarrin/snowflake"
)

// TestGenBase58ParsesWithBwmarrin: what `flurry gen --format base58` prints is read
// by bwmarrin/snowflake's ParseBase58 as the same int64 that `flurry decode
// --format base58` says the ID is, for every line of a run: the CLI's output, not
// only the library's encoder, is bwmarrin's form byte for byte. It also checks
// bwmarrin's Base58 of that int64 gives the line back.
func TestGenBase58ParsesWithBwmarrin(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("FLURRY_TEST_REQUIRE") == "1" {
			t.Fatal("go is not on PATH; FLURRY_TEST_REQUIRE=1 needs it")
		}
		t.Skip("go is not on PATH: cannot build flurry")
	}
	bin := filepath.Join(t.TempDir(), "flurry")
	build := exec.Command(goBin, "build", "-o", bin, "./cmd/flurry")
	build.Dir = ".." // the flurry module, which the bench module replaces with ../
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/flurry: %v\n%s", err, out)
	}
	gen, err := exec.Command(bin, "gen", "-n", "5000", "--node", "worker=7", "--format", "base58").Output()
	if err != nil {
		t.Fatalf("flurry gen --format base58: %v", err)
	}
	lines := strings.Fields(string(gen))
	if len(lines) != 5000 {
		t.Fatalf("flurry gen -n 5000 printed %d IDs", len(lines))
	}
	dec := exec.Command(bin, "decode", "--format", "base58", "--layout", "twitter")
	dec.Stdin = bytes.NewReader(gen)
	out, err := dec.Output()
	if err != nil {
		t.Fatalf("flurry decode --format base58: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	i := 0
	for ; sc.Scan(); i++ {
		var d struct{ ID string }
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("flurry decode line %d: %v: %s", i, err, sc.Bytes())
		}
		want, err := strconv.ParseInt(d.ID, 10, 64)
		if err != nil {
			t.Fatalf("flurry decode line %d: id %q: %v", i, d.ID, err)
		}
		got, err := bwsnow.ParseBase58([]byte(lines[i]))
		if err != nil {
			t.Fatalf("bwmarrin's ParseBase58(%q), line %d of flurry gen: %v", lines[i], i, err)
		}
		if int64(got) != want {
			t.Fatalf("line %d: flurry gen printed %q; bwmarrin reads %d, flurry decode says %d", i, lines[i], int64(got), want)
		}
		if b := bwsnow.ID(want).Base58(); b != lines[i] {
			t.Fatalf("line %d: bwmarrin writes %d as %q, flurry gen printed %q", i, want, b, lines[i])
		}
	}
	if i != len(lines) {
		t.Fatalf("flurry decode printed %d lines for %d IDs", i, len(lines))
	}
}
