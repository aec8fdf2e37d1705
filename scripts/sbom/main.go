// Command sbom writes a CycloneDX 1.5 JSON software bill of materials for a Go
// binary, from the module list the Go linker embedded in it (debug/buildinfo, what
// `go version -m` prints): exactly the modules linked into that binary, at the
// versions linked, for any GOOS/GOARCH. scripts/release.sh runs it for every
// release binary. Standard library only, so the main module gains no dependency.
//
//	go run ./scripts/sbom -version v0.4.0 -o flurry.cdx.json dist/flurry-v0.4.0-linux-amd64
package main

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"time"
)

// BOM is the part of CycloneDX 1.5 this program writes.
type BOM struct {
	BOMFormat    string       `json:"bomFormat"`
	SpecVersion  string       `json:"specVersion"`
	SerialNumber string       `json:"serialNumber"`
	Version      int          `json:"version"`
	Metadata     Metadata     `json:"metadata"`
	Components   []Component  `json:"components"`
	Dependencies []Dependency `json:"dependencies"`
}

// Metadata describes the BOM and the binary it is about.
type Metadata struct {
	Timestamp string    `json:"timestamp"`
	Tools     Tools     `json:"tools"`
	Component Component `json:"component"`
}

// Tools names what made the BOM.
type Tools struct {
	Components []Component `json:"components"`
}

// Component is an application (the binary) or a library (a Go module).
type Component struct {
	Type       string     `json:"type"`
	BOMRef     string     `json:"bom-ref,omitempty"`
	Name       string     `json:"name"`
	Version    string     `json:"version,omitempty"`
	PURL       string     `json:"purl,omitempty"`
	Hashes     []Hash     `json:"hashes,omitempty"`
	Properties []Property `json:"properties,omitempty"`
}

// Hash is a digest of a component.
type Hash struct {
	Alg     string `json:"alg"`
	Content string `json:"content"`
}

// Property is a name/value pair.
type Property struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Dependency says what a component depends on.
type Dependency struct {
	Ref       string   `json:"ref"`
	DependsOn []string `json:"dependsOn"`
}

func main() {
	version := flag.String("version", "", "the release version of the binary (default: the module version in its build info)")
	out := flag.String("o", "", "write the SBOM here (default: standard output)")
	epoch := flag.Int64("epoch", 0, "the BOM's timestamp in Unix seconds (the release script passes the commit's time, so output is reproducible; 0: now)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: sbom [-version v] [-epoch s] [-o file] BINARY\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *version, *out, *epoch); err != nil {
		fmt.Fprintf(os.Stderr, "sbom: %v\n", err)
		os.Exit(1)
	}
}

func run(bin, version, out string, epoch int64) error {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("%s: %w (is it a Go binary?)", bin, err)
	}
	sum, err := fileSHA256(bin)
	if err != nil {
		return err
	}
	ts := time.Now().UTC()
	if epoch != 0 {
		ts = time.Unix(epoch, 0).UTC()
	}
	bom := Build(bi, version, sum, ts)
	b, err := json.MarshalIndent(bom, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if out == "" {
		_, err = os.Stdout.Write(b)
		return err
	}
	return os.WriteFile(out, b, 0o644)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func purl(path, version string) string {
	if version == "" {
		return "pkg:golang/" + path
	}
	return "pkg:golang/" + path + "@" + version
}

// Build makes the BOM of a binary with build info bi and SHA-256 sum (hex). The
// serial number is derived from the sum, so one binary always gets one BOM.
func Build(bi *debug.BuildInfo, version, sum string, ts time.Time) *BOM {
	if version == "" {
		version = bi.Main.Version
	}
	mainRef := purl(bi.Main.Path, version)
	props := []Property{{"go:toolchain", bi.GoVersion}}
	for _, s := range bi.Settings {
		switch s.Key {
		case "GOOS", "GOARCH", "CGO_ENABLED", "-trimpath", "-tags", "vcs.revision", "vcs.time", "vcs.modified":
			props = append(props, Property{"go:build:" + s.Key, s.Value})
		}
	}
	bom := &BOM{
		BOMFormat:    "CycloneDX",
		SpecVersion:  "1.5",
		SerialNumber: "urn:uuid:" + uuidFrom(sum),
		Version:      1,
		Metadata: Metadata{
			Timestamp: ts.Format(time.RFC3339),
			Tools:     Tools{Components: []Component{{Type: "application", Name: "flurry scripts/sbom"}}},
			Component: Component{
				Type: "application", BOMRef: mainRef, Name: bi.Main.Path, Version: version, PURL: mainRef,
				Hashes: []Hash{{Alg: "SHA-256", Content: sum}}, Properties: props,
			},
		},
		Components: []Component{},
	}
	deps := Dependency{Ref: mainRef, DependsOn: []string{}}
	for _, m := range bi.Deps {
		if m.Replace != nil {
			m = m.Replace
		}
		ref := purl(m.Path, m.Version)
		c := Component{Type: "library", BOMRef: ref, Name: m.Path, Version: m.Version, PURL: ref}
		if m.Sum != "" {
			c.Properties = []Property{{"go:module:sum", m.Sum}}
		}
		bom.Components = append(bom.Components, c)
		deps.DependsOn = append(deps.DependsOn, ref)
	}
	sort.Slice(bom.Components, func(i, j int) bool { return bom.Components[i].Name < bom.Components[j].Name })
	sort.Strings(deps.DependsOn)
	bom.Dependencies = []Dependency{deps}
	return bom
}

// uuidFrom shapes the first 16 bytes of a hex SHA-256 as a version 5-style UUID
// (RFC 9562 name-based layout: version and variant bits set).
func uuidFrom(sum string) string {
	b, err := hex.DecodeString(sum)
	if err != nil || len(b) < 16 {
		b = make([]byte, 16)
	}
	b = b[:16]
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
