// Command depgraph draws the import graph of flurry's packages in layers and checks
// that it has the shape ARCHITECTURE.md promises: every import of a product package
// goes to its own layer or one below, no product package imports a verification
// package, and the graph has no cycle. It reads the imports from `go list -deps`
// for the lean build and for -tags flurry_full (build tags change which files, so
// which imports, a package has), and exits 1 when the check fails.
//
//	go run ./verify/cmd/depgraph        # the drawing, then the verdict
//	go run ./verify/cmd/depgraph -q     # the verdict only (make lint)
//
// A package's layer comes from the table below, the most specific rule first; a
// package no rule names fails the check, so that a new directory is placed on
// purpose.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"
)

// module is the import path every package of this repository starts with.
const module = "github.com/flurryid/flurry"

// A layer is a set of packages that may import each other and any layer below.
type layer struct {
	name string
	// rules are package paths relative to the module ("." for the root): an exact
	// path, or a prefix ending in "/..." that also matches the path itself.
	rules []string
}

// verify is the side of the drawing that holds the verification rigs and the
// stores' conformance suites: they may import anything, and nothing in the
// product imports them (only tests do).
const verify = -1

// layers lists the product, bottom first.
var layers = []layer{
	{"internal helpers: standard library and modules only", []string{
		"internal/...",
	}},
	{"foundations: flurry.ID, clock, layout, the wire API", []string{
		".", "clock/...", "layout/...", "api/...",
	}},
	{"generators", []string{
		"snowflake/...", "uuidv7/...", "objectid/...",
	}},
	{"leases, segments, IDs made in Redis or a SQL database (and their stores)", []string{
		// With the stores: lease/leasestore and segment/segmentstore, the checks
		// every store makes of its arguments, which import lease and segment as
		// the stores do.
		"lease/...", "segment/...", "redisgen/...", "indb/...",
	}},
	{"server and client", []string{
		"server/...", "client/...",
	}},
	{"commands and release tooling", []string{
		"cmd/...", "scripts/...",
	}},
}

// verifyRules are the packages on the verification side.
var verifyRules = []string{
	"verify/...",
}

// pkg is what go list says of one package.
type pkg struct {
	ImportPath string
	Imports    []string
	Module     *struct{ Path string }
	Standard   bool
	Error      *struct{ Err string }
}

// graph maps a package (relative to the module) to the module packages it
// imports, over every build configuration read.
type graph map[string]map[string]bool

func main() {
	quiet := flag.Bool("q", false, "print only problems and the verdict line")
	tagSets := flag.String("tags", ",flurry_full", "comma-separated build tag sets to read (empty: the lean build)")
	flag.Parse()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	g := graph{}
	var sets []string
	for _, tags := range strings.Split(*tagSets, ",") {
		if err := g.read(ctx, tags); err != nil {
			fmt.Fprintln(os.Stderr, "depgraph:", err)
			os.Exit(2)
		}
		sets = append(sets, cmpOr(tags, "lean"))
	}
	if !*quiet {
		draw(os.Stdout, g)
	}
	problems := check(g)
	for _, p := range problems {
		fmt.Println("depgraph:", p)
	}
	edges := 0
	for _, to := range g {
		edges += len(to)
	}
	up, fromProduct, cycles, unplaced, folders := count(problems)
	fmt.Printf("depgraph: %d packages in %d top-level folders, %d imports between them (%s); arrows back up: %d, product imports of verification packages: %d, cycles: %d, packages in no layer: %d, folder problems (a folder across layers or importing upward): %d\n",
		len(g), countFolders(g), edges, strings.Join(sets, " and "), up, fromProduct, cycles, unplaced, folders)
	if len(problems) > 0 {
		os.Exit(1)
	}
}

func countFolders(g graph) int {
	seen := map[string]bool{}
	for p := range g {
		seen[folderOf(p)] = true
	}
	return len(seen)
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// read adds the module's packages and their imports under one tag set.
func (g graph) read(ctx context.Context, tags string) error {
	args := []string{"list", "-e", "-deps", "-json=ImportPath,Imports,Module,Standard,Error"}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	args = append(args, "./...")
	cmd := exec.CommandContext(ctx, "go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("go list output: %w", err)
		}
		if p.Standard || p.Module == nil || p.Module.Path != module {
			continue
		}
		if p.Error != nil {
			return fmt.Errorf("go list (tags %q): %s: %s", tags, p.ImportPath, p.Error.Err)
		}
		from := rel(p.ImportPath)
		if g[from] == nil {
			g[from] = map[string]bool{}
		}
		for _, imp := range p.Imports {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				g[from][rel(imp)] = true
			}
		}
	}
}

// rel returns an import path relative to the module: "." for the root.
func rel(path string) string {
	if path == module {
		return "."
	}
	return strings.TrimPrefix(path, module+"/")
}

// match reports how specifically rule names path: 0 for not at all, more for a
// longer rule, and an exact rule above a prefix of the same length.
func match(rule, path string) int {
	if prefix, ok := strings.CutSuffix(rule, "/..."); ok {
		if path == prefix || strings.HasPrefix(path, prefix+"/") {
			return 2 * len(prefix)
		}
		return 0
	}
	if rule == path {
		return 2*len(rule) + 1
	}
	return 0
}

// layerOf returns the index of path's layer, verify for the verification side,
// and ok false when no rule names it.
func layerOf(path string) (idx int, ok bool) {
	best := 0
	for _, r := range verifyRules {
		if m := match(r, path); m > best {
			best, idx = m, verify
		}
	}
	for i, l := range layers {
		for _, r := range l.rules {
			if m := match(r, path); m > best {
				best, idx = m, i
			}
		}
	}
	return idx, best > 0
}

// The kinds of problem check finds, as the first word of its messages.
const (
	kindUp       = "up:"
	kindProduct  = "product imports verification:"
	kindCycle    = "cycle:"
	kindUnplaced = "no layer:"
	kindFolder   = "folder:"
)

// folderOf returns the top-level directory that holds path ("." for the root
// package): the unit of the drawing by folder.
func folderOf(path string) string {
	top, _, _ := strings.Cut(path, "/")
	return top
}

// checkFolders returns the problems of the graph drawn by top-level folder: a
// folder whose packages sit in different layers (it would need an arrow back up
// to be drawn as one box), and an import from a folder into one of a higher layer,
// which the package check reports too but a reader of the folders sees first.
func checkFolders(g graph) []string {
	layerOfFolder := map[string]int{}
	var out []string
	for _, p := range sorted(g) {
		l, ok := layerOf(p)
		if !ok {
			continue
		}
		f := folderOf(p)
		if have, seen := layerOfFolder[f]; !seen {
			layerOfFolder[f] = l
		} else if have != l {
			out = append(out, fmt.Sprintf("%s %s/ holds packages of layers %d and %d (%s); move %s to a folder of its layer", kindFolder, f, have, l, p, p))
		}
	}
	up := map[string]bool{}
	for _, from := range sorted(g) {
		ff := folderOf(from)
		for _, to := range sortedSet(g[from]) {
			tf := folderOf(to)
			fl, okf := layerOfFolder[ff]
			tl, okt := layerOfFolder[tf]
			if ff == tf || !okf || !okt || fl == verify || (tl != verify && tl <= fl) {
				continue
			}
			if k := ff + " " + tf; !up[k] {
				up[k] = true
				out = append(out, fmt.Sprintf("%s %s/ imports %s/ (%s imports %s), a folder of a higher layer or the verification side", kindFolder, ff, tf, from, to))
			}
		}
	}
	return out
}

// check returns the graph's problems, one message each, in a stable order.
func check(g graph) []string {
	var out []string
	for _, from := range sorted(g) {
		fl, ok := layerOf(from)
		if !ok {
			out = append(out, fmt.Sprintf("%s %s: no rule in verify/cmd/depgraph places it; add it to a layer", kindUnplaced, from))
			continue
		}
		for _, to := range sortedSet(g[from]) {
			tl, ok := layerOf(to)
			switch {
			case !ok || fl == verify:
				// Reported as unplaced above, or the verification side, which
				// may import anything.
			case tl == verify:
				out = append(out, fmt.Sprintf("%s %s (%s) imports %s", kindProduct, from, layers[fl].name, to))
			case tl > fl:
				out = append(out, fmt.Sprintf("%s %s (layer %d, %s) imports %s (layer %d, %s)", kindUp, from, fl, layers[fl].name, to, tl, layers[tl].name))
			}
		}
	}
	for _, c := range cycles(g) {
		out = append(out, fmt.Sprintf("%s %s", kindCycle, strings.Join(c, " -> ")))
	}
	return append(out, checkFolders(g)...)
}

func count(problems []string) (up, product, cyc, unplaced, folders int) {
	for _, p := range problems {
		switch {
		case strings.HasPrefix(p, kindUp):
			up++
		case strings.HasPrefix(p, kindProduct):
			product++
		case strings.HasPrefix(p, kindCycle):
			cyc++
		case strings.HasPrefix(p, kindUnplaced):
			unplaced++
		case strings.HasPrefix(p, kindFolder):
			folders++
		}
	}
	return
}

// cycles returns one path for each cycle a depth-first search meets (a back edge
// to a package still on the stack), each starting and ending at the same package.
func cycles(g graph) [][]string {
	const (
		unseen = iota
		onStack
		done
	)
	state := map[string]int{}
	var stack []string
	var out [][]string
	var visit func(p string)
	visit = func(p string) {
		state[p] = onStack
		stack = append(stack, p)
		for _, q := range sortedSet(g[p]) {
			switch state[q] {
			case unseen:
				visit(q)
			case onStack:
				i := len(stack) - 1
				for stack[i] != q {
					i--
				}
				out = append(out, append(append([]string(nil), stack[i:]...), q))
			}
		}
		stack = stack[:len(stack)-1]
		state[p] = done
	}
	for _, p := range sorted(g) {
		if state[p] == unseen {
			visit(p)
		}
	}
	return out
}

// draw prints the packages by layer, top first as in ARCHITECTURE.md, each with
// what it imports from the module.
func draw(w io.Writer, g graph) {
	byLayer := map[int][]string{}
	for _, p := range sorted(g) {
		if l, ok := layerOf(p); ok {
			byLayer[l] = append(byLayer[l], p)
		}
	}
	line := func(p string) {
		imports := sortedSet(g[p])
		if len(imports) == 0 {
			fmt.Fprintf(w, "    %s\n", p)
			return
		}
		fmt.Fprintf(w, "    %s -> %s\n", p, strings.Join(imports, " "))
	}
	fmt.Fprintln(w, "Product layers, top first: each package imports only from its own layer and those below.")
	for i := len(layers) - 1; i >= 0; i-- {
		fmt.Fprintf(w, "  %d  %s\n", i, layers[i].name)
		for _, p := range byLayer[i] {
			line(p)
		}
	}
	fmt.Fprintln(w, "Verification, beside the layers: may import anything; only tests import it.")
	for _, p := range byLayer[verify] {
		line(p)
	}
}

func sorted(g graph) []string {
	out := make([]string, 0, len(g))
	for p := range g {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func sortedSet(s map[string]bool) []string {
	out := make([]string, 0, len(s))
	for p := range s {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
