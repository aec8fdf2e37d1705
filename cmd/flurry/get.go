package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/flurryid/flurry/client"
)

// defaultServer is where get and bench look when --server is not given: the
// address `flurry serve` listens on by default.
const defaultServer = "http://127.0.0.1:8080"

// clientFlags are the flags get and bench share to reach servers.
type clientFlags struct {
	servers   []string
	namespace string
	token     string
	grpc      bool
	timeout   time.Duration
}

func (cf *clientFlags) register(cmd *cobra.Command, serverHelp string) {
	f := cmd.Flags()
	f.StringArrayVar(&cf.servers, "server", []string{defaultServer}, serverHelp)
	f.StringVar(&cf.namespace, "namespace", "default", "the namespace to take IDs from")
	f.StringVar(&cf.token, "token", "", "bearer token of the namespace (default $FLURRY_TOKEN)")
	f.BoolVar(&cf.grpc, "grpc", false, "speak gRPC (HTTP/2, h2c for http://) instead of HTTP")
	f.DurationVar(&cf.timeout, "timeout", client.DefaultTimeout, "bound on each request to one server")
}

// serverList parses --server values, each one address or a comma-separated list.
func (cf *clientFlags) serverList() ([]string, error) {
	var out []string
	for _, s := range cf.servers {
		l, err := client.ParseServers(s)
		if err != nil {
			return nil, usageErr("--server: %v", err)
		}
		out = append(out, l...)
	}
	if cf.timeout <= 0 {
		return nil, usageErr("--timeout %v must be positive", cf.timeout)
	}
	if cf.token == "" {
		cf.token = os.Getenv("FLURRY_TOKEN")
	}
	return out, nil
}

func newGetCmd() *cobra.Command {
	var (
		cf      clientFlags
		n       uint64 = 1
		batch   uint64 = 10_000
		jsonOut bool
	)
	cmd := &cobra.Command{
		Use:   "get",
		Short: "Take IDs from flurry servers",
		Long: `get asks flurry servers (flurry serve) for IDs of a namespace and prints them,
one per line, or as one JSON object with --json:
  {"namespace":"default","ids":["123",...]}

IDs of integer namespaces are decimal; uuidv7 and objectid namespaces give text
IDs. Several servers (--server repeated, or a comma-separated list) are tried in
order: one that is down or does not answer within --timeout is skipped for the
next. A refusal every server would repeat (unknown namespace, token, a batch above
the server's max_count) ends get at once.`,
		Example: `  flurry get --server http://127.0.0.1:8080 --namespace default -n 10
  flurry get --server http://10.0.0.1:8080,http://10.0.0.2:8080 -n 1e6 > ids.txt
  FLURRY_TOKEN=s3cret flurry get --namespace orders --grpc --json -n 3`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			servers, err := cf.serverList()
			if err != nil {
				return err
			}
			if n == 0 {
				return usageErr("-n must be at least 1")
			}
			if batch == 0 || batch > 1<<31 {
				return usageErr("--batch must be between 1 and 2147483648")
			}
			opts := client.Options{Servers: servers, Token: cf.token, Timeout: cf.timeout}
			if cf.grpc {
				opts.Transport = client.GRPC
			}
			c, err := client.New(opts)
			if err != nil {
				return usageErr("%v", err)
			}
			defer c.Close()
			return quietPipe(runGet(cmd.Context(), c, cf.namespace, n, int(batch), jsonOut, cmd.OutOrStdout()))
		},
	}
	cf.register(cmd, "server URL, repeated or comma-separated, tried in order")
	f := cmd.Flags()
	f.VarP(countValue{&n}, "count", "n", "how many IDs: 10, 1_000_000 or 1e6")
	f.Var(countValue{&batch}, "batch", "IDs per request, at most the servers' max_count")
	f.BoolVar(&jsonOut, "json", false, `print {"namespace":...,"ids":[...]} instead of one ID per line`)
	return cmd
}

// runGet fetches n IDs in requests of at most batch and writes them as they come.
func runGet(ctx context.Context, c *client.Client, namespace string, n uint64, batch int, jsonOut bool, out io.Writer) error {
	w := bufio.NewWriterSize(out, 64<<10)
	if jsonOut {
		fmt.Fprintf(w, `{"namespace":%s,"ids":[`, strconv.Quote(namespace))
	}
	var buf []byte
	first := true
	for left := n; left > 0; {
		count := int(min(left, uint64(batch)))
		ids, text, err := c.Fetch(ctx, namespace, count)
		if err != nil {
			return fmt.Errorf("get: %w", err)
		}
		for i := range len(ids) + len(text) {
			buf = buf[:0]
			if jsonOut && !first {
				buf = append(buf, ',')
			}
			first = false
			switch {
			case jsonOut && i < len(ids):
				buf = append(buf, '"')
				buf, _ = ids[i].AppendText(buf)
				buf = append(buf, '"')
			case jsonOut:
				buf = strconv.AppendQuote(buf, text[i-len(ids)])
			case i < len(ids):
				buf, _ = ids[i].AppendText(buf)
				buf = append(buf, '\n')
			default:
				buf = append(buf, text[i-len(ids)]...)
				buf = append(buf, '\n')
			}
			if _, err := w.Write(buf); err != nil {
				return err
			}
		}
		left -= uint64(len(ids) + len(text))
	}
	if jsonOut {
		w.WriteString("]}\n")
	}
	return w.Flush()
}
