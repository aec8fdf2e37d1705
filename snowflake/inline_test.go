package snowflake_test

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/flurryid/flurry/verify/testenv"
)

// TestNextInlined: Next is inlined into its callers, which is what lets its fast
// path keep no lane index and no context across the clock read (docs/benchmarks.md
// counts the instructions). Its cost sits at the compiler's inlining budget, so a
// line added to it can silently turn it into a call, costing an ID several
// instructions; this asks the compiler.
func TestNextInlined(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		if testenv.Required() {
			t.Fatal("go is not on PATH; FLURRY_TEST_REQUIRE=1 needs it")
		}
		t.Skip("go is not on PATH: cannot ask the compiler what it inlines")
	}
	out, err := exec.Command(goBin, "build", "-gcflags=-m", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)next\.go:\d+:\d+: can inline \(\*Generator\)\.Next( |$)`).Match(out) {
		var lines []string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, "(*Generator).Next") {
				lines = append(lines, l)
			}
		}
		t.Fatalf("the compiler no longer inlines (*Generator).Next: keep its body within the inlining budget (go build -gcflags=-m=2 ./snowflake says its cost)\n%s", strings.Join(lines, "\n"))
	}
}
