package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// newCompletionCmd returns "flurry completion SHELL", cobra's completion scripts
// under a help text that says where each one goes.
func newCompletionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print a shell completion script",
		Long: `completion prints a script that completes flurry's commands and flags in the
given shell. Load it once per session, or install it where the shell looks:

  bash        flurry completion bash > ~/.local/share/bash-completion/completions/flurry
  zsh         flurry completion zsh > "${fpath[1]}/_flurry"   (with compinit enabled)
  fish        flurry completion fish > ~/.config/fish/completions/flurry.fish
  powershell  flurry completion powershell | Out-String | Invoke-Expression`,
		Example: `  flurry completion zsh > "${fpath[1]}/_flurry"
  source <(flurry completion bash)`,
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("completion takes one shell: bash, zsh, fish or powershell; got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			root, out := cmd.Root(), cmd.OutOrStdout()
			var err error
			switch args[0] {
			case "bash":
				err = root.GenBashCompletionV2(out, true)
			case "zsh":
				err = root.GenZshCompletion(out)
			case "fish":
				err = root.GenFishCompletion(out, true)
			case "powershell":
				err = root.GenPowerShellCompletionWithDesc(out)
			default:
				return usageErr("completion: unknown shell %q; want bash, zsh, fish or powershell", clipArg(args[0]))
			}
			return quietPipe(err)
		},
	}
}

// newManCmd returns "flurry man DIR", which writes one roff man page per command.
//
// cobra's own generator (github.com/spf13/cobra/doc) converts markdown with
// github.com/cpuguy83/go-md2man, a module flurry does not otherwise need; the pages
// are simple enough to write as roff here, from the same command tree.
func newManCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "Write man pages for flurry and its commands into a directory",
		Long: `man writes a section 1 man page for flurry and for each of its commands
(flurry.1, flurry-gen.1, flurry-redis-set-node.1, ...) into DIR, creating it if
needed, and prints the paths it wrote.`,
		Example: `  flurry man ~/.local/share/man/man1 && man flurry-gen`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("man takes the directory to write the pages into; got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			return writeManPages(cmd.Root(), dir, time.Now(), cmd.OutOrStdout())
		},
	}
}

// writeManPages writes the page of c and of every available subcommand below it.
func writeManPages(c *cobra.Command, dir string, date time.Time, out io.Writer) error {
	if !c.IsAvailableCommand() && c.HasParent() {
		return nil
	}
	path := filepath.Join(dir, manName(c)+".1")
	if err := os.WriteFile(path, []byte(manPage(c, date)), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(out, path)
	for _, sub := range c.Commands() {
		if err := writeManPages(sub, dir, date, out); err != nil {
			return err
		}
	}
	return nil
}

// manName is the page name: the command path with dashes, "flurry-redis-set-node".
func manName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "-")
}

// manPage renders c as a roff man(7) page: NAME, SYNOPSIS, DESCRIPTION, OPTIONS,
// EXAMPLES and SEE ALSO (parent and subcommands).
func manPage(c *cobra.Command, date time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH %q 1 %q \"flurry\" \"flurry manual\"\n", strings.ToUpper(manName(c)), date.Format("2006-01-02"))
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roffText(manName(c)), roffText(c.Short))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n.B %s\n", roffText(c.UseLine()))
	desc := c.Long
	if desc == "" {
		desc = c.Short
	}
	b.WriteString(".SH DESCRIPTION\n")
	b.WriteString(roffBlock(desc))
	writeFlags := func(title string, fs *pflag.FlagSet) {
		if !fs.HasAvailableFlags() {
			return
		}
		fmt.Fprintf(&b, ".SH %s\n", title)
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			name := "\\-\\-" + roffText(f.Name)
			if f.Shorthand != "" {
				name = "\\-" + roffText(f.Shorthand) + ", " + name
			}
			if f.Value.Type() != "bool" {
				name += " " + roffText(f.Value.Type())
			}
			fmt.Fprintf(&b, ".TP\n.B %s\n%s", name, roffBlock(f.Usage))
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "[]" {
				fmt.Fprintf(&b, "Default: %s.\n", roffText(f.DefValue))
			}
		})
	}
	writeFlags("OPTIONS", c.NonInheritedFlags())
	writeFlags("OPTIONS INHERITED FROM PARENT COMMANDS", c.InheritedFlags())
	if c.Example != "" {
		b.WriteString(".SH EXAMPLES\n.nf\n")
		for _, line := range strings.Split(strings.TrimRight(c.Example, "\n"), "\n") {
			b.WriteString(roffLine(line) + "\n")
		}
		b.WriteString(".fi\n")
	}
	var see []string
	if c.HasParent() {
		see = append(see, manName(c.Parent()))
	}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			see = append(see, manName(sub))
		}
	}
	if len(see) > 0 {
		sort.Strings(see)
		b.WriteString(".SH SEE ALSO\n")
		for i, s := range see {
			sep := ",\n"
			if i == len(see)-1 {
				sep = "\n"
			}
			fmt.Fprintf(&b, ".BR %s (1)%s", roffText(s), sep)
		}
	}
	return b.String()
}

// roffBlock renders help text: blank lines start paragraphs, indented lines (the
// help's examples and tables) are kept as they are, other lines fill.
func roffBlock(s string) string {
	var b strings.Builder
	verbatim := false
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		indented := strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")
		switch {
		case strings.TrimSpace(line) == "":
			if verbatim {
				b.WriteString(".fi\n")
				verbatim = false
			}
			b.WriteString(".PP\n")
			continue
		case indented && !verbatim:
			b.WriteString(".nf\n")
			verbatim = true
		case !indented && verbatim:
			b.WriteString(".fi\n")
			verbatim = false
		}
		b.WriteString(roffLine(line) + "\n")
	}
	if verbatim {
		b.WriteString(".fi\n")
	}
	return b.String()
}

// roffLine escapes one line of text and keeps it from being read as a request: a
// line starting with "." or "'" is a roff control line.
func roffLine(s string) string {
	s = roffText(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = "\\&" + s
	}
	return s
}

// roffText escapes backslashes and hyphens (a plain "-" may print as a hyphen, not
// the minus a flag needs).
func roffText(s string) string {
	s = strings.ReplaceAll(s, "\\", "\\e")
	return strings.ReplaceAll(s, "-", "\\-")
}
