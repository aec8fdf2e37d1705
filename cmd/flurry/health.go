package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// newHealthCmd is the probe for places with no curl: a scratch container image's
// HEALTHCHECK, or an exec probe.
func newHealthCmd() *cobra.Command {
	var url string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Probe a running flurry serve: exit 0 when it answers 200, 1 otherwise",
		Long: `health asks a running flurry serve's /readyz (or --url) and exits 0 when the
answer is 200 OK, 1 otherwise with the status and body on stderr. It is the health
check of the container image, which has no shell and no curl.`,
		Example: `  flurry health
  flurry health --url http://127.0.0.1:8080/healthz --timeout 2s`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return probe(cmd.Context(), url, timeout, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&url, "url", "http://127.0.0.1:8080/readyz", "the URL to ask")
	cmd.Flags().DurationVar(&timeout, "timeout", 3*time.Second, "give up after this long")
	return cmd
}

func probe(ctx context.Context, url string, timeout time.Duration, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return usageErr("--url: %v", err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 512))
	text := strings.TrimSpace(string(body))
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("health: %s answered %s: %s", url, res.Status, oneLineText(text))
	}
	_, err = fmt.Fprintln(stdout, text)
	return err
}

func oneLineText(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
