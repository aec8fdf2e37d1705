package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/client"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/server/config"
	"github.com/spf13/cobra"
)

func newDecodeCmd() *cobra.Command {
	var (
		layoutText string
		format     string
		cf         clientFlags
	)
	cmd := &cobra.Command{
		Use:   "decode [ID...]",
		Short: "Take IDs apart: time, node fields and sequence, as JSON",
		Long: `decode prints one JSON object per ID, one per line, in the order given:
  {"id":"175928847299117063","time":"2016-04-30T11:18:25.796Z","worker":1,"process":0,"seq":7,
   "unix_ms":"1462015105796","fields":[{"name":"worker","value":"1"},{"name":"process","value":"0"}],"sequence":"7"}
(on one line). The time is the start of the tick the ID was issued in; the node
fields follow in layout order, as keys and again as the list "fields", and the
sequence as "seq" and "sequence": the second forms are the server's (GET
/v1/{namespace}/decode/{id}, its 64-bit numbers as strings), so a script reads the
same keys from either. The ID is a string, since JavaScript numbers lose digits above 2^53.

An ID does not say which layout made it, so decode needs one: --layout, or
--server to use the layout of a running server's namespace (--namespace, default
"default"). flurry gen's default layout is twitter; flurry serve's default
namespace uses time:41:1ms:2025-01-01T00:00:00Z,worker:6,seq:16.

With no ID arguments, decode reads IDs from standard input, one per line; blank lines
and spaces around an ID are skipped.

--format reads the IDs in another form of flurry gen --format: hex, base62,
crockford32 (Crockford's Base32: either case, I and L read as 1, O as 0), or
bwmarrin/snowflake's base2, base32, base36, base58 or base64; the JSON still
gives the ID in decimal. decode never guesses the form, since one string is often
an ID in several ("10" is one in all but base64, each a different ID): without
--format it reads decimal, and an ID that is not decimal is reported with the
forms it would read as, to pick from with --format.

An ID that is not a number in that form, is negative, or does not belong to the layout
(bits set above its width) is reported on standard error as one line naming it;
decode goes on with the next ID and exits with status 1 at the end.`,
		Example: `  flurry decode --layout discord 175928847299117063
  flurry gen -n 3 --node worker=5 | flurry decode --layout twitter
  flurry decode --server http://127.0.0.1:8080 --namespace default 250370138287636480
  flurry gen -n 3 --format base58 | flurry decode --format base58 --layout twitter
  flurry decode --layout time:41:1ms:2020-01-01T00:00:00Z,worker:10,seq:12 < ids.txt`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			enc, err := flurry.ParseEncoding(format)
			if err != nil {
				return usageErr("--format: %v", err)
			}
			l, err := decodeLayout(cmd, layoutText, &cf)
			if err != nil {
				return err
			}
			d := &decoder{l: l, enc: enc, hint: !cmd.Flags().Changed("format"), out: bufio.NewWriterSize(cmd.OutOrStdout(), 32<<10), errw: cmd.ErrOrStderr()}
			err = d.run(args, cmd.InOrStdin())
			if ee, ok := errors.AsType[*exitError](err); (err == nil || ok && ee.code == 0) && d.bad > 0 {
				return &exitError{code: 1} // each bad ID was reported on its own line
			}
			return err
		},
	}
	f := cmd.Flags()
	f.Var(newEnum(&format, "decimal", flurry.EncodingNames()...), "format", "the IDs' form: decimal, hex, base62, crockford32, or bwmarrin/snowflake's base2, base32, base36, base58 or base64, as flurry gen --format writes them")
	f.StringVar(&layoutText, "layout", "", "the IDs' layout: a preset name or a text form (see flurry layouts)")
	f.StringArrayVar(&cf.servers, "server", nil, "use the layout of a running server's namespace instead: its URL")
	f.StringVar(&cf.namespace, "namespace", "default", "with --server: the namespace whose layout to use")
	f.StringVar(&cf.token, "token", "", "with --server: bearer token of the namespace (default $FLURRY_TOKEN)")
	f.DurationVar(&cf.timeout, "timeout", client.DefaultTimeout, "with --server: bound on each request")
	// pflag reads "-5" as a flag. Say what is wrong with it as an ID instead.
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		if arg, ok := negativeArg(err); ok {
			return fmt.Errorf("decode %q: %w: IDs are never negative (put arguments that start with - after --)", arg, flurry.ErrInvalidID)
		}
		return &usageError{err: err}
	})
	return cmd
}

// decodeLayout is the layout decode uses: --layout's, or the one a server's
// namespace reports (GET /v1/info); without either it refuses to guess, since an
// ID decodes without error under the wrong layout, to a wrong time.
func decodeLayout(cmd *cobra.Command, text string, cf *clientFlags) (*layout.Layout, error) {
	switch {
	case text != "" && len(cf.servers) > 0:
		return nil, usageErr("give --layout or --server, not both")
	case text != "":
		return parseLayoutFlag(text)
	case len(cf.servers) == 0:
		return nil, usageErr("decode needs the IDs' layout, which an ID does not carry: give --layout (flurry gen's default is twitter; "+
			"flurry serve's default namespace uses %s), or --server URL [--namespace NAME] to use a running server's", config.DefaultLayout)
	}
	servers, err := cf.serverList()
	if err != nil {
		return nil, err
	}
	c, err := client.New(client.Options{Servers: servers, Token: cf.token, Timeout: cf.timeout})
	if err != nil {
		return nil, usageErr("--server: %v", err)
	}
	defer c.Close()
	info, err := c.Info(cmd.Context(), cf.namespace)
	if err != nil {
		if errors.Is(err, client.ErrUnavailable) {
			return nil, fmt.Errorf("decode: could not reach %s for the layout of namespace %q: %w", strings.Join(servers, ","), cf.namespace, err)
		}
		return nil, fmt.Errorf("decode: asking %s for the layout of namespace %q: %w", strings.Join(servers, ","), cf.namespace, err)
	}
	for _, ns := range info.Namespaces {
		if ns.Name != cf.namespace {
			continue
		}
		if ns.Layout == nil {
			return nil, fmt.Errorf("decode: namespace %q is a %s namespace: its IDs have no layout to decode", cf.namespace, ns.Strategy)
		}
		return layout.Parse(ns.Layout.Text)
	}
	return nil, fmt.Errorf("decode: the server has no namespace %q", cf.namespace)
}

// negativeArg recognises pflag's error for an argument such as -5 and returns it.
func negativeArg(err error) (string, bool) {
	msg := err.Error()
	i := strings.LastIndex(msg, " in -")
	if !strings.HasPrefix(msg, "unknown shorthand flag: ") || i < 0 {
		return "", false
	}
	arg := msg[i+len(" in "):]
	return arg, len(arg) > 1 && strings.Trim(arg[1:], "0123456789") == ""
}

type decoder struct {
	l    *layout.Layout
	enc  flurry.Encoding
	hint bool // no --format: name the forms a non-decimal ID reads as
	out  *bufio.Writer
	errw io.Writer
	bad  int
	buf  []byte
}

// appendDecoded appends d's JSON: the layout's form (the node fields as keys, then
// seq), then the keys of the server's decode route (GET /v1/{namespace}/decode/{id}:
// unix_ms, fields as a list of name and value, sequence), so that a script reads
// the same keys from either. Those are written as the route writes them: its
// 64-bit integers as strings (protojson, for JavaScript's 2^53).
func appendDecoded(b []byte, d layout.Decoded) []byte {
	j, _ := d.MarshalJSON()
	b = append(b, j[:len(j)-1]...) // without its closing brace
	b = append(b, `,"unix_ms":"`...)
	b = strconv.AppendInt(b, d.Time.UnixMilli(), 10)
	b = append(b, '"')
	b = append(b, `,"fields":[`...)
	for i, n := range d.Nodes {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = strconv.AppendQuote(b, n.Name)
		b = append(b, `,"value":"`...)
		b = strconv.AppendInt(b, n.Value, 10)
		b = append(b, `"}`...)
	}
	b = append(b, `],"sequence":"`...)
	b = strconv.AppendInt(b, d.Sequence, 10)
	return append(b, `"}`...)
}

// run decodes args, or the lines of stdin when there are none, and flushes.
func (d *decoder) run(args []string, stdin io.Reader) error {
	if len(args) == 0 {
		if err := d.decodeLines(stdin); err != nil {
			return err
		}
	}
	for _, a := range args {
		if err := d.decode(a); err != nil {
			return err
		}
	}
	return quietPipe(d.out.Flush())
}

// decode prints one ID's JSON, or reports why it is not an ID of the layout. It
// returns an error only when the output cannot be written.
func (d *decoder) decode(s string) error {
	dec, err := decodeID(d.l, d.enc, strings.TrimSpace(s))
	if err != nil && d.hint {
		err = withFormsHint(err, strings.TrimSpace(s))
	}
	if err != nil {
		d.bad++
		// Flush first so that the report lands after the good IDs before it.
		if ferr := d.out.Flush(); ferr != nil {
			return quietPipe(ferr)
		}
		fmt.Fprintf(d.errw, "flurry: %s\n", oneLine(err))
		return nil
	}
	d.buf = appendDecoded(d.buf[:0], dec)
	d.out.Write(d.buf)
	if err := d.out.WriteByte('\n'); err != nil {
		return quietPipe(err)
	}
	return nil
}

// decodeLines decodes one ID per line of r, skipping blank lines. Output is flushed
// whenever no more input is buffered, so that IDs typed by hand are answered at once.
func (d *decoder) decodeLines(r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, rerr := br.ReadString('\n')
		if s := strings.TrimSpace(line); s != "" {
			if err := d.decode(s); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("decode: reading standard input: %w", rerr)
		}
		if br.Buffered() == 0 {
			if err := d.out.Flush(); err != nil {
				return quietPipe(err)
			}
		}
	}
}

// decodeID parses s as an ID in enc and takes it apart with l. Errors name s.
func decodeID(l *layout.Layout, enc flurry.Encoding, s string) (layout.Decoded, error) {
	if enc == flurry.Decimal && strings.HasPrefix(s, "-") && len(s) > 1 && strings.Trim(s[1:], "0123456789") == "" {
		return layout.Decoded{}, fmt.Errorf("decode %q: %w: IDs are never negative", clip(s), flurry.ErrInvalidID)
	}
	id, err := enc.Parse(s)
	if err != nil {
		return layout.Decoded{}, fmt.Errorf("decode %q: %w", clip(s), err)
	}
	dec, err := l.Decode(id)
	if err != nil {
		return layout.Decoded{}, fmt.Errorf("decode %q: %w", clip(s), err)
	}
	return dec, nil
}

// withFormsHint adds to err, decimal's refusal of s, the other forms s is an
// ID in, for --format; decode does not pick one, since each gives another ID.
func withFormsHint(err error, s string) error {
	if !errors.Is(err, flurry.ErrInvalidID) {
		return err
	}
	if _, perr := flurry.ParseID(s); perr == nil {
		return err // decimal, refused by the layout: the form is not the matter
	}
	var forms []string
	for _, name := range flurry.EncodingNames() {
		e, _ := flurry.ParseEncoding(name)
		if _, perr := e.Parse(s); e != flurry.Decimal && perr == nil {
			forms = append(forms, name)
		}
	}
	if len(forms) == 0 {
		return err
	}
	return fmt.Errorf("%w (decode reads decimal without --format; it is an ID in %s: give --format to say which)", err, strings.Join(forms, ", "))
}

func clip(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}
