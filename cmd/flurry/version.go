package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/flurryid/flurry/internal/engines"
	"github.com/spf13/cobra"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of flurry and of Go it was built with",
		Long: `version prints the module version of this binary ("(devel)" when built from a
work tree rather than installed with go install ...@version), the VCS revision when
known, the Go version, the platform and the engines built in: "lean" (the file
stores only) or the build tags (flurry_full, flurry_sql, ...; docs/building.md).`,
		Example: `  flurry version`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionLine())
			return err
		},
	}
}

// Set at link time by scripts/release.sh:
//
//	go build -ldflags "-X main.version=v0.4.0 -X main.commit=1a2b3c4d5e6f" ./cmd/flurry
//
// Empty in a go build or go install, where the module version and the VCS revision
// come from the build info instead.
var (
	version string // the release's version, e.g. v0.4.0
	commit  string // the release's VCS revision
)

// versionLine returns e.g. "flurry v0.3.0 go1.26.8 linux/amd64 (flurry_full)" or,
// from a work tree, "flurry (devel) rev 1a2b3c4d5e6f+dirty go1.26.8 linux/amd64
// (lean)". A release build's stamped version and commit win over the build info
// (a cross-build with -trimpath from a work tree has no module version of its own).
func versionLine() string {
	return versionString(version, commit)
}

func versionString(stampVersion, stampCommit string) string {
	version, rev := "(devel)", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" {
			version = v
		}
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" && modified {
			rev += "+dirty"
		}
	}
	if stampVersion != "" {
		version = stampVersion
	}
	if stampCommit != "" {
		rev = stampCommit
	}
	s := "flurry " + version
	if rev != "" {
		s += " rev " + rev
	}
	return fmt.Sprintf("%s %s %s/%s (%s)", s, runtime.Version(), runtime.GOOS, runtime.GOARCH, builtIn())
}

// builtIn names the engine families built in, as the build tags that add them:
// the families whose packages registered themselves (engines_*.go), or "lean".
func builtIn() string {
	if t := engines.Tags(); t != "" {
		return t
	}
	return "lean"
}
