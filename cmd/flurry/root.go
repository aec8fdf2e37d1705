package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/flurryid/flurry/server/config"
)

// newRootCmd returns the flurry command with every subcommand. Output goes to stdout
// and stderr; standard input is the command's InOrStdin (os.Stdin unless SetIn).
// Errors are returned, not printed: run prints them as one line.
func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "flurry",
		Short: "Unique, time-ordered 64-bit IDs",
		Long: `flurry issues unique, time-ordered 64-bit IDs (Snowflake-like) and helps choose,
inspect and decode their bit layouts.

A layout is a preset name (twitter, leaf, sonyflake, baidu, instagram, discord,
mastodon, gameserver, jssafe) or a text form such as
  time:41:1ms:2010-11-04T01:42:54.657Z,datacenter:5,worker:5,seq:12

Errors are printed as one line, "flurry: <reason>". Exit codes: 0 success, 1 failure,
2 usage error, 130 interrupted.`,
		Example: `  flurry layouts
  flurry gen -n 5 --layout twitter --node datacenter=1,worker=3
  flurry gen -n 5 --lease file:///var/lib/flurry/leases --node datacenter=1
  flurry lease list file:///var/lib/flurry/leases
  flurry segment create file:///tmp/ids order && flurry gen --segment file:///tmp/ids --tag order -n 5
  flurry decode --layout discord 175928847299117063
  flurry plan --years 10 --rate 100000 --node datacenter=4 --node machine=100
  flurry version`,
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		// Without this, "flurry bogus" on a command with subcommands prints help and
		// exits 0; an unknown command is a usage error.
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(cmd, args[0])
			}
			return cmd.Help()
		},
		CompletionOptions:          cobra.CompletionOptions{DisableDefaultCmd: true},
		SuggestionsMinimumDistance: 2,
	}
	root.Version = versionLine()
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err: err} })
	root.AddCommand(newLayoutsCmd(), newGenCmd(), newDecodeCmd(), newPlanCmd(), newLeaseCmd(), newRedisCmd(), newSegmentCmd(), newSQLCmd(), newVersionCmd())
	root.AddCommand(newServeCmd())
	root.AddCommand(newGetCmd(), newBenchCmd())
	root.AddCommand(newCompletionCmd(), newManCmd(), newHealthCmd())
	return root
}

// asksHelp reports whether args ask for help (-h, --help) before any "--".
func asksHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "--help":
			return true
		}
	}
	return false
}

// unknownCommand is the usage error for a word that names no subcommand of root.
func unknownCommand(root *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q", name)
	if s := root.SuggestionsFor(name); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", s[0])
	}
	return usageErr("%s", msg)
}

// run executes the command line args and returns the process exit code. Every error
// is written to stderr as one line starting with "flurry: ".
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetIn(stdin)
	root.SetArgs(args)
	var cmd *cobra.Command
	var err error
	// "flurry nosuch --help" would print the root's help and succeed: cobra
	// answers --help before the root's RunE sees the unknown word.
	root.InitDefaultHelpCmd() // else Execute adds "help" only after Find has looked
	if c, rest, ferr := root.Find(args); ferr == nil && c == root && asksHelp(args) {
		for _, a := range rest {
			if a == "--" {
				break
			}
			if !strings.HasPrefix(a, "-") {
				cmd, err = root, unknownCommand(root, a)
				break
			}
		}
	}
	if err == nil {
		cmd, err = root.ExecuteContextC(ctx)
	}
	if err == nil {
		return 0
	}
	code := 1
	// A configuration's problems are listed one per line (docs/server.md): joined
	// into one line, ten of them could not be read.
	if ce, ok := errors.AsType[*config.Error](err); ok {
		fmt.Fprintf(stderr, "flurry: %s\n", strings.ReplaceAll(ce.Error(), "\r", ""))
		return code
	}
	msg := oneLine(err)
	if ee, ok := errors.AsType[*exitError](err); ok {
		code = ee.code
		if ee.err == nil {
			return code // already reported
		}
	}
	if _, ok := errors.AsType[*usageError](err); ok {
		code = 2
		if cmd == nil {
			cmd = root
		}
		msg += fmt.Sprintf(" (see '%s --help')", cmd.CommandPath())
	}
	fmt.Fprintf(stderr, "flurry: %s\n", msg)
	return code
}

// usageError is a command line that cannot be run: exit code 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErr(format string, a ...any) error {
	return &usageError{err: fmt.Errorf(format, a...)}
}

// exitError carries an exit code. A nil err means the reason was already printed.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// quietPipe turns a write error from a closed pipe (the reader has gone, as with
// | head) into an exit with status 0 and no message, and keeps every other error.
func quietPipe(err error) error {
	if errors.Is(err, syscall.EPIPE) {
		return &exitError{code: 0}
	}
	return err
}

// oneLine returns err's message on one line, without a leading "flurry: " (run adds
// its own, and the package prefix of flurry.ErrInvalidID reads oddly after it).
func oneLine(err error) string {
	s := strings.TrimPrefix(err.Error(), "flurry: ")
	s = strings.ReplaceAll(s, ": flurry: ", ": ")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, "; ")
}

// isTerminal reports whether w is a character device such as a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// enumValue is a string flag that accepts one of a fixed set of words.
type enumValue struct {
	allowed []string
	value   *string
}

func newEnum(p *string, def string, allowed ...string) *enumValue {
	*p = def
	return &enumValue{allowed: allowed, value: p}
}

func (e *enumValue) String() string { return *e.value }
func (e *enumValue) Type() string   { return strings.Join(e.allowed, "|") }
func (e *enumValue) Set(s string) error {
	for _, a := range e.allowed {
		if strings.EqualFold(s, a) {
			*e.value = a
			return nil
		}
	}
	return fmt.Errorf("want one of %s", strings.Join(e.allowed, ", "))
}

// countValue is a non-negative integer flag that also accepts "1e6" and "1_000_000".
type countValue struct{ value *uint64 }

func (c countValue) String() string { return strconv.FormatUint(*c.value, 10) }
func (c countValue) Type() string   { return "count" }
func (c countValue) Set(s string) error {
	v, err := parseCount(s)
	if err != nil {
		return err
	}
	*c.value = v
	return nil
}

// parseCount reads a whole non-negative number written as 1000000, 1_000_000 or 1e6.
func parseCount(s string) (uint64, error) {
	t := strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	if v, err := strconv.ParseUint(t, 10, 64); err == nil {
		return v, nil
	}
	f, err := strconv.ParseFloat(t, 64)
	switch {
	case err != nil || math.IsNaN(f):
		return 0, fmt.Errorf("%q is not a number such as 1000000 or 1e6", s)
	case f < 0:
		return 0, fmt.Errorf("%q is negative", s)
	case f != math.Trunc(f):
		return 0, fmt.Errorf("%q is not a whole number", s)
	case f >= 1<<63:
		return 0, fmt.Errorf("%q is too large", s)
	}
	return uint64(f), nil
}

// group writes n with thousands separators: 4096000 -> "4,096,000".
func group(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
