//go:build !(flurry_full || flurry_sql)

package main

import (
	"errors"

	"github.com/spf13/cobra"
)

var errNoSQL = errors.New("flurry sql needs a flurry built with -tags flurry_sql (or flurry_full)")

// newSQLCmd keeps the sql command and its subcommands in the lean build's help and
// man pages, each saying how to get it.
func newSQLCmd() *cobra.Command {
	const long = `flurry sql has PostgreSQL or MariaDB make IDs itself (a function for column
defaults). It needs a flurry built with -tags flurry_sql (or flurry_full):

  go install -tags flurry_full github.com/flurryid/flurry/cmd/flurry@latest`
	refuse := func(*cobra.Command, []string) error { return errNoSQL }
	cmd := &cobra.Command{
		Use:     "sql",
		Short:   "Have PostgreSQL or MariaDB make IDs itself (needs -tags flurry_sql)",
		Long:    long,
		Example: `  flurry sql install postgres://app@db1:5432/shop --layout instagram --table orders --column id`,
		Args:    cobra.ArbitraryArgs,
		RunE:    refuse,
	}
	for _, sub := range []struct{ use, short string }{
		{"emit", "Print the SQL that installs the function (needs -tags flurry_sql)"},
		{"install URL", "Install the function in a database (needs -tags flurry_sql)"},
		{"uninstall URL", "Remove the function and release its node value (needs -tags flurry_sql)"},
		{"status URL", "Show the function's layout, node value and lease (needs -tags flurry_sql)"},
	} {
		cmd.AddCommand(&cobra.Command{
			Use: sub.use, Short: sub.short, Long: long,
			Args: cobra.ArbitraryArgs, RunE: refuse,
			FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		})
	}
	return cmd
}
