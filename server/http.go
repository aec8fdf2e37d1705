package server

import (
	"context"
	"encoding/binary"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/api/flurryv1"
	"github.com/flurryid/flurry/api/flurryv1/flurryv1connect"
	"github.com/flurryid/flurry/server/dashboard"
)

// Output formats of the plain next route.
const (
	fmtJSON   = iota // {"namespace":"n","ids":["1","2"]}
	fmtNumber        // {"namespace":"n","ids":[1,2]}
	fmtText          // 1\n2\n
)

// Pieces of a large batch: how many IDs are issued, formatted and written at a
// time, so that a request holds the same memory whatever its count (a piece of
// text IDs as JSON is about 40 KB, of integers about 45 KB).
const (
	pieceInts = 2048
	pieceText = 1024
)

// sniffLen is how much of a body net/http's sniffing reads (http.DetectContentType).
const sniffLen = 512

// maxPooled is the largest buffer put back into a pool (slog's rule: return only
// smaller buffers, so one huge request does not pin its memory).
const maxPooled = 64 << 10

// route is one pattern the server registers.
type route struct {
	pattern string
	h       http.Handler
}

// routeList is every route of the server's mux, in one place so that a test can
// walk them all (TestAnonymousSeesNothing): a route added here is checked for
// what it shows an anonymous caller.
func (s *Server) routeList() []route {
	path, rpcH := flurryv1connect.NewIDServiceHandler(&rpc{s: s},
		connect.WithReadMaxBytes(int(s.maxBody)),
		connect.WithRecover(func(_ context.Context, _ connect.Spec, _ http.Header, p any) error {
			s.log.Error("panic in an RPC handler", "panic", p)
			return connect.NewError(connect.CodeInternal, errInternal)
		}))
	dash := dashboard.Handler()
	return append(s.compatRoutes(), []route{
		{nextPattern, http.HandlerFunc(s.handleNext)},
		{"GET /v1/{namespace}/decode/{id}", http.HandlerFunc(s.handleDecode)},
		{"GET /v1/info", http.HandlerFunc(s.handleInfo)},
		{path, s.rpcHold(http.MaxBytesHandler(rpcH, s.maxBody))},
		{"/api/snowflake/get/{key}", s.issuing(s.leafSnowflake)},
		{"GET /metrics", http.HandlerFunc(s.handleMetrics)},
		{"GET /healthz", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Content-Type"] = s.ctText
			w.Write([]byte("ok\n"))
		})},
		{"GET /readyz", http.HandlerFunc(s.handleReady)},
		{"GET /{$}", dash},
		{"GET /assets/", dash},
		{"/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if s.springTakes(r.URL.Path) {
				s.springServe(w, r) // /cache.json and the like, as Spring matches them
				return
			}
			s.writeError(w, fmtJSON, &apiError{status: 404, msg: "no route " + r.Method + " " + clip(r.URL.Path) + "; see GET /v1/{namespace}/next, GET /v1/{namespace}/decode/{id}, GET /v1/info"})
		})},
	}...)
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	rl := s.routeList()
	for _, rt := range rl {
		mux.Handle(rt.pattern, rt.h)
	}
	if !hotNextSafe(mux, rl) {
		return s.recoverer(mux)
	}
	return s.recoverer(s.hotNext(mux))
}

// nextPattern is the one-ID route's pattern. It names no method, so that
// handleNext answers every method itself: for a "GET " pattern ServeMux serves
// HEAD with the GET handler, which issues IDs, and answers other methods with
// an Allow that lists HEAD.
const nextPattern = "/v1/{namespace}/next"

// hotNextSafe reports whether hotNext may serve nextPattern's paths before mux,
// asking mux itself which pattern it routes them to. A pattern that wins over
// nextPattern for some GET /v1/{n}/next (a compatibility route under an
// operator's prefix could) matches only such paths, or mux would have refused
// it as conflicting when it was registered: its path is /v1/{w}/next or
// /v1/L/next, perhaps with a host. So each registered pattern is turned into a
// path (a wildcard becomes a name) and every one of the form /v1/{n}/next is
// asked for; if mux routes one elsewhere, mux decides every request.
func hotNextSafe(mux *http.ServeMux, routes []route) bool {
	for _, rt := range routes {
		host, path := patternPath(rt.pattern)
		if _, ok := nextPath(path); !ok {
			continue
		}
		r := &http.Request{Method: http.MethodGet, Host: host, URL: &url.URL{Path: path}, Header: http.Header{}}
		if _, pattern := mux.Handler(r); pattern != nextPattern {
			return false
		}
	}
	return true
}

// patternPath returns the host of a ServeMux pattern ("[METHOD ][HOST]/PATH")
// and a path it matches: each wildcard segment replaced by a name, {$} by
// nothing.
func patternPath(pattern string) (host, path string) {
	if i := strings.IndexAny(pattern, " \t"); i >= 0 {
		pattern = strings.TrimLeft(pattern[i:], " \t")
	}
	i := strings.IndexByte(pattern, '/')
	if i < 0 {
		return pattern, ""
	}
	host, path = pattern[:i], pattern[i:]
	segs := strings.Split(path, "/")
	for j, seg := range segs {
		switch {
		case seg == "{$}":
			segs[j] = ""
		case strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}"):
			segs[j] = "x"
		}
	}
	return host, strings.Join(segs, "/")
}

// hotNext serves the GETs that ServeMux would route to nextPattern without
// asking it: matching a request against the server's twenty patterns (path
// cleaning, segment unescaping, the routing tree) cost as much CPU as the whole
// one-ID handler, about 2.5% of the server's CPU per request under load (perf,
// docs/benchmarks.md). Anything else, including any other method (HEAD too), a
// path that needs cleaning or holds escapes, goes to the mux.
func (s *Server) hotNext(mux http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if name, ok := hotTakes(r); ok {
			s.next(w, r, name)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// hotTakes reports whether hotNext serves r itself, and for which namespace: a
// GET of a clean path /v1/{namespace}/next that holds no escapes.
func hotTakes(r *http.Request) (string, bool) {
	if r.Method != http.MethodGet || r.URL.RawPath != "" {
		return "", false
	}
	return nextPath(r.URL.Path)
}

// nextPath returns the namespace of a path /v1/{namespace}/next that is clean and
// needs no unescaping, for which ServeMux's match of nextPattern gives the same
// namespace (FuzzNextPath checks it against the mux).
func nextPath(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "/v1/")
	if !ok {
		return "", false
	}
	name, ok := strings.CutSuffix(rest, "/next")
	if !ok || name == "" || name == "." || name == ".." || strings.IndexByte(name, '/') >= 0 {
		return "", false
	}
	return name, true
}

// holdKey keys the *rpcHeld of an RPC in its context.
type holdKey struct{}

// rpcHeld is the part of the IDs budget an RPC holds, and the packed_ids buffer
// of its answer. An RPC's answer is built whole and written by connect after the
// method returns, so both are given back here, once the whole call is served,
// not by the method.
type rpcHeld struct {
	n   int
	buf *[]byte
}

// maxPackPooled is the largest packed_ids buffer put back into its pool: the
// default max_count's 100,000 IDs fit. The IDs budget bounds how many are in use.
const maxPackPooled = 8 << 17

func (s *Server) rpcHold(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		held := &rpcHeld{}
		defer func() {
			s.budget.give(held.n)
			if held.buf != nil && cap(*held.buf) <= maxPackPooled {
				s.packBufs.Put(held.buf)
			}
		}()
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), holdKey{}, held)))
	})
}

// recoverer answers 500 instead of dropping the connection if a handler panics,
// and bounds in time what a client controls: the body (read_timeout) and the
// response (write_timeout). The deadlines are set per request here rather than
// as http.Server's ReadTimeout and WriteTimeout, which arm two timers for every
// request: the hot path (one ID, HTTP/1.1, no body) has nothing to bound — its
// headers are bounded by ReadHeaderTimeout and its answer is under 100 bytes —
// so it pays nothing; a batch is bounded in handleNext. Costs a deferred call,
// no allocation, on the hot path.
func (s *Server) recoverer(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("panic in an HTTP handler", "panic", p, "path", r.URL.Path)
				s.writeError(w, fmtJSON, &apiError{status: 500, msg: "internal error: " + errInternal.Error()})
			}
		}()
		if r.ContentLength != 0 || r.ProtoMajor >= 2 {
			s.deadlines(w, true)
		} else if p := r.URL.Path; !strings.HasSuffix(p, "/next") && !strings.HasPrefix(p, "/api/") {
			s.deadlines(w, false)
		}
		h.ServeHTTP(w, r)
	})
}

// deadlines sets the response's write deadline (limits.write_timeout) and, with
// body, the request's read deadline (limits.read_timeout): a body that trickles is
// cut, as is a client that does not read. net/http clears both before the
// connection's next request.
func (s *Server) deadlines(w http.ResponseWriter, body bool) {
	// net/http's HTTP/1.1 and HTTP/2 writers have these methods (what
	// http.ResponseController calls); asserting them directly allocates nothing.
	d, ok := w.(interface {
		SetReadDeadline(time.Time) error
		SetWriteDeadline(time.Time) error
	})
	if !ok {
		return
	}
	now := time.Now()
	if body {
		d.SetReadDeadline(now.Add(s.readTimeout))
	}
	d.SetWriteDeadline(now.Add(s.writeTimeout))
}

// nextQuery reads count, format and encoding from a raw query without
// allocating for the usual forms (count=12&format=text). format=base58 (any
// encoding's name) is short for format=json&encoding=base58.
func nextQuery(raw string, acceptText bool) (count int, format int, enc flurry.Encoding, err *apiError) {
	count, format = 1, fmtJSON
	if acceptText {
		format = fmtText
	}
	for raw != "" {
		var kv string
		kv, raw, _ = strings.Cut(raw, "&")
		k, v, _ := strings.Cut(kv, "=")
		if strings.IndexByte(kv, '%') >= 0 || strings.IndexByte(kv, '+') >= 0 {
			var e1, e2 error
			k, e1 = url.QueryUnescape(k)
			v, e2 = url.QueryUnescape(v)
			if e1 != nil || e2 != nil {
				return 0, 0, 0, errBadRequest("malformed query %q", clip(kv))
			}
		}
		switch k {
		case "count", "n":
			n, perr := strconv.Atoi(v)
			if perr != nil || n < 1 || len(v) > 12 {
				return 0, 0, 0, errBadRequest("count %q is not a whole number from 1 up", clip(v))
			}
			count = n
		case "format":
			switch v {
			case "json", "":
				format = fmtJSON
			case "number":
				format = fmtNumber
			case "text":
				format = fmtText
			default:
				e, perr := flurry.ParseEncoding(v)
				if perr != nil {
					return 0, 0, 0, errBadRequest("format %q: use json (decimal strings), number or text, or an encoding: %s", clip(v), strings.Join(flurry.EncodingNames(), ", "))
				}
				format, enc = fmtJSON, e
			}
		case "encoding":
			e, perr := flurry.ParseEncoding(v)
			if perr != nil {
				return 0, 0, 0, errBadRequest("encoding %q: use one of %s", clip(v), strings.Join(flurry.EncodingNames(), ", "))
			}
			enc = e
		}
	}
	if enc != flurry.Decimal && format == fmtNumber {
		return 0, 0, 0, errBadRequest("format=number gives decimal numbers; use format=json or text with encoding=%v", enc)
	}
	return count, format, enc, nil
}

// header returns the first value of a header whose name is already canonical,
// without Header.Get's canonicalisation of the name on every call.
func header(r *http.Request, canonical string) string {
	if v := r.Header[canonical]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func acceptsText(accept string) bool {
	return accept != "" && strings.HasPrefix(accept, "text/plain")
}

// handleNext is /v1/{namespace}/next as the mux routes it; hotNext calls next
// directly for a GET. Any other method issues nothing: HEAD especially, which
// clients, proxies and link checkers send believing it changes nothing. It gets
// 405 rather than a 200 with GET's headers, because those headers (and the
// status) are known only by issuing: a 200 would claim that a GET succeeds now,
// which a namespace whose store is down or whose token is missing would not.
func (s *Server) handleNext(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		_, format, _, _ := nextQuery(r.URL.RawQuery, acceptsText(header(r, "Accept")))
		w.Header().Set("Allow", http.MethodGet)
		s.writeError(w, format, &apiError{status: http.StatusMethodNotAllowed, code: connect.CodeUnimplemented,
			msg: "method " + clip(r.Method) + " not allowed: /v1/{namespace}/next issues IDs on GET only"})
		return
	}
	s.next(w, r, r.PathValue("namespace"))
}

// next serves GET /v1/{name}/next: the hot path.
func (s *Server) next(w http.ResponseWriter, r *http.Request, name string) {
	start := s.opts.Clock.Now()
	count, format, enc, qerr := nextQuery(r.URL.RawQuery, acceptsText(header(r, "Accept")))
	ns := s.namespaces[name]
	if ns == nil {
		s.writeError(w, format, s.errNotFound(name))
		return
	}
	if e := s.authorize(ns, header(r, "Authorization")); e != nil {
		s.countError(ns, e)
		s.writeError(w, format, e)
		return
	}
	switch {
	case qerr != nil:
		s.countError(ns, qerr)
		s.writeError(w, format, qerr)
		return
	case enc != flurry.Decimal && ns.text != nil:
		e := errBadRequest("namespace %s issues text IDs (%s); encoding=%v is for integer IDs", ns.name, ns.strategy, enc)
		s.countError(ns, e)
		s.writeError(w, format, e)
		return
	case count > ns.maxCount:
		e := errBadRequest("count %d is above the max_count %d of namespace %s; ask in several requests", count, ns.maxCount, ns.name)
		s.countError(ns, e)
		s.writeError(w, format, e)
		return
	}
	// One ID holds no more than its connection does (MemoryPerConn), so it
	// takes nothing from the budget and the hot path pays no shared atomic.
	if count > 1 {
		s.deadlines(w, false)
		hold := min(count, ns.piece)
		if !s.budget.take(hold) {
			e := errBusy()
			s.countError(ns, e)
			s.writeError(w, format, e)
			return
		}
		defer s.budget.give(hold)
	}
	bp := s.bufs.Get().(*[]byte)
	b := (*bp)[:0]
	var err error
	if count == 1 && ns.text == nil {
		var id flurry.ID
		if id, err = ns.ints.Next(r.Context()); err == nil {
			b = s.appendIDs(b, ns, format, enc, id, nil, true, true)
		}
	} else {
		b, err = s.nextBatch(w, r.Context(), ns, b, count, format, enc)
	}
	if err != nil {
		e := s.issueError(ns, err)
		s.countError(ns, e)
		s.writeError(w, format, e)
	} else {
		ns.issued.Add(int64(count))
		if len(b) > 0 {
			switch {
			case format == fmtText && ns.text == nil && enc == flurry.Decimal && len(b) <= sniffLen:
				// Decimal digits and newlines: net/http's sniffing sets this
				// same Content-Type (TestNextTextSniffed), without the four
				// allocations that touching w.Header() costs (the map insert
				// and its clone at WriteHeader) on the one-ID hot path.
			case format == fmtText:
				w.Header()["Content-Type"] = s.ctText
			default:
				w.Header()["Content-Type"] = s.ctJSON
			}
			w.Write(b)
		}
		ns.metrics.next.Observe(float64(s.opts.Clock.Now()-start) / 1e9)
	}
	if cap(b) <= maxPooled {
		*bp = b[:0]
		s.bufs.Put(bp)
	}
}

// appendIDs appends ids (one, or a slice) in format and enc; first and last say
// whether the opening and closing of a JSON body are written.
func (s *Server) appendIDs(b []byte, ns *namespace, format int, enc flurry.Encoding, one flurry.ID, ids []flurry.ID, first, last bool) []byte {
	if ids == nil {
		ids = []flurry.ID{one}[:1:1] // does not escape: appendIDs is not retained
	}
	if enc != flurry.Decimal {
		return appendEncoded(b, ns, format, enc, ids, first, last)
	}
	if format == fmtText {
		return appendLines(b, ids)
	}
	// number and json share the envelope; json writes each ID as a string.
	quote := format != fmtNumber
	if first {
		b = append(b, `{"namespace":"`...)
		b = append(b, ns.name...)
		b = append(b, `","ids":[`...)
	}
	ps, pe := 0, 0
	for i, id := range ids {
		if i > 0 || !first {
			b = append(b, ',')
		}
		if quote {
			b = append(b, '"')
		}
		b, ps, pe = appendID(b, id, i > 0 && id == ids[i-1]+1, ps, pe)
		if quote {
			b = append(b, '"')
		}
	}
	if last {
		b = append(b, "]}\n"...)
	}
	return b
}

// appendEncoded is appendIDs for an encoding other than decimal: text lines, or
// the JSON body with each ID a string in the encoding (no encoding needs JSON
// escaping).
func appendEncoded(b []byte, ns *namespace, format int, enc flurry.Encoding, ids []flurry.ID, first, last bool) []byte {
	if format == fmtText {
		for _, id := range ids {
			b = enc.AppendID(b, id)
			b = append(b, '\n')
		}
		return b
	}
	if first {
		b = append(b, `{"namespace":"`...)
		b = append(b, ns.name...)
		b = append(b, `","ids":[`...)
	}
	for i, id := range ids {
		if i > 0 || !first {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = enc.AppendID(b, id)
		b = append(b, '"')
	}
	if last {
		b = append(b, "]}\n"...)
	}
	return b
}

// appendID appends the decimal form of id to b and returns where its digits are.
// When succ is set, id is one more than the ID whose digits are b[ps:pe], and its
// digits are those incremented in place: consecutive IDs of a batch (one tick's
// sequence, a segment range) cost a copy instead of a division per digit.
func appendID(b []byte, id flurry.ID, succ bool, ps, pe int) ([]byte, int, int) {
	start := len(b)
	if succ && pe > ps {
		b = append(b, b[ps:pe]...)
		for i := len(b) - 1; i >= start; i-- {
			if b[i] != '9' {
				b[i]++
				return b, start, len(b)
			}
			b[i] = '0'
		}
		b = b[:start] // 999 -> 1000: one digit more
	}
	b = strconv.AppendInt(b, int64(id), 10)
	return b, start, len(b)
}

// appendLines appends ids one per line. A run of consecutive IDs is written by
// copying the previous line into place and incrementing its digits, with the
// buffer grown once per run.
func appendLines(b []byte, ids []flurry.ID) []byte {
	for i := 0; i < len(ids); {
		start := len(b)
		b = strconv.AppendInt(b, int64(ids[i]), 10)
		b = append(b, '\n')
		w := len(b) - start // digits and the newline
		j := i + 1
		for j < len(ids) && ids[j] == ids[j-1]+1 {
			j++
		}
		b = slices.Grow(b, (j-i-1)*w)
		prev := start
		k := i + 1
		for ; k < j; k++ {
			pos := len(b)
			b = b[:pos+w]
			copy(b[pos:pos+w], b[prev:prev+w])
			d := pos + w - 2
			for d >= pos && b[d] == '9' {
				b[d] = '0'
				d--
			}
			if d < pos { // 999 -> 1000: one digit more; start a new run here
				b = b[:pos]
				break
			}
			b[d]++
			prev = pos
		}
		i = k
	}
	return b
}

// nextBatch issues count IDs and formats them in pieces of at most ns.piece, so
// a request holds one piece of memory whatever its count. A batch of one piece
// is returned whole in b and nothing is written, so an error still gets its
// status. A larger one is written piece by piece after each is issued; an error
// before the first write is returned, one after it aborts the response
// (http.ErrAbortHandler): the client sees a broken stream, never a short body
// that looks whole.
func (s *Server) nextBatch(w http.ResponseWriter, ctx context.Context, ns *namespace, b []byte, count, format int, enc flurry.Encoding) ([]byte, error) {
	var ids []flurry.ID
	if ns.text == nil {
		ip := s.idBufs.Get().(*[]flurry.ID)
		ids = (*ip)[:cap(*ip)]
		defer func() {
			*ip = ids[:0]
			s.idBufs.Put(ip)
		}()
	}
	wrote := false
	for done := 0; done < count; {
		n := min(ns.piece, count-done)
		first, last := done == 0, done+n == count
		var err error
		if ns.text != nil {
			b, err = s.appendText(ctx, ns, b, n, format, first, last)
		} else if err = ns.nextN(ctx, ids[:n]); err == nil {
			b = s.appendIDs(b, ns, format, enc, 0, ids[:n], first, last)
		}
		if err != nil {
			if !wrote {
				return b, err
			}
			ns.issued.Add(int64(done))
			s.logIssue(ns, err)
			panic(http.ErrAbortHandler)
		}
		done += n
		if last {
			break
		}
		if !wrote {
			if format == fmtText {
				w.Header()["Content-Type"] = s.ctText
			} else {
				w.Header()["Content-Type"] = s.ctJSON
			}
			wrote = true
		}
		if _, err := w.Write(b); err != nil {
			// The client left, or did not read within limits.write_timeout.
			ns.issued.Add(int64(done))
			panic(http.ErrAbortHandler)
		}
		b = b[:0]
	}
	return b, nil
}

// appendText appends n IDs of a text namespace in format; first and last say
// whether the opening and closing of a JSON body are written.
func (s *Server) appendText(ctx context.Context, ns *namespace, b []byte, n, format int, first, last bool) ([]byte, error) {
	if format == fmtText {
		return ns.text.appendNext(ctx, b, n, '\n', false)
	}
	if first {
		b = append(b, `{"namespace":"`...)
		b = append(b, ns.name...)
		b = append(b, `","ids":[`...)
	}
	b, err := ns.text.appendNext(ctx, b, n, ',', true) // "id", each: text IDs hold no quote or comma
	if err != nil {
		return b, err
	}
	if last {
		b = append(b[:len(b)-1], "]}\n"...)
	}
	return b, nil
}

// writeError answers with the error's status and a one-line body: JSON
// {"error":"...","status":404} or, for text requests, the message alone.
func (s *Server) writeError(w http.ResponseWriter, format int, e *apiError) {
	h := w.Header()
	if e.retry > 0 {
		if e.retry == 1 {
			h["Retry-After"] = s.retryAfter1
		} else {
			h.Set("Retry-After", strconv.Itoa(e.retry))
		}
	}
	if e.status == 401 {
		if e.auth == authWrong {
			h["Www-Authenticate"] = s.bearerInvalid
		} else {
			h["Www-Authenticate"] = s.bearer
		}
	}
	h.Set("X-Content-Type-Options", "nosniff")
	if format == fmtText {
		h["Content-Type"] = s.ctText
		w.WriteHeader(e.status)
		w.Write([]byte("error: " + oneLine(e.msg) + "\n"))
		return
	}
	h["Content-Type"] = s.ctJSON
	w.WriteHeader(e.status)
	b := []byte(`{"error":`)
	b = strconv.AppendQuote(b, oneLine(e.msg))
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(e.status), 10)
	b = append(b, "}\n"...)
	w.Write(b)
}

func (s *Server) countError(ns *namespace, e *apiError) {
	s.metrics.errors.WithLabelValues(ns.name, strconv.Itoa(e.status)).Inc()
}

// handleDecode is GET /v1/{namespace}/decode/{id}[?encoding=base58]: the
// DecodeResponse message in JSON with the proto's field names.
func (s *Server) handleDecode(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("namespace")
	ns := s.namespaces[name]
	if ns == nil {
		s.writeError(w, fmtJSON, s.errNotFound(name))
		return
	}
	if e := s.authorize(ns, header(r, "Authorization")); e != nil {
		s.writeError(w, fmtJSON, e)
		return
	}
	text := r.PathValue("id")
	if v := r.URL.Query().Get("encoding"); v != "" && !strings.EqualFold(v, "decimal") {
		// The ID in another encoding (as next's encoding= gives it): read it
		// here, then decode its decimal form like any other.
		enc, err := flurry.ParseEncoding(v)
		if err != nil {
			s.writeError(w, fmtJSON, errBadRequest("encoding %q: use one of %s", clip(v), strings.Join(flurry.EncodingNames(), ", ")))
			return
		}
		if ns.text != nil {
			s.writeError(w, fmtJSON, errBadRequest("namespace %s issues text IDs (%s); encoding=%v is for integer IDs", ns.name, ns.strategy, enc))
			return
		}
		id, err := enc.Parse(text)
		if err != nil {
			s.writeError(w, fmtJSON, errBadRequest("%s is not an ID of namespace %s: %s", clipQ(text), ns.name, strings.TrimPrefix(err.Error(), "flurry: ")))
			return
		}
		text = id.String()
	}
	res, e := s.decode(ns, text)
	if e != nil {
		s.writeError(w, fmtJSON, e)
		return
	}
	s.writeProto(w, res)
}

// writeProto writes m as JSON with the proto's field names, every field present.
func (s *Server) writeProto(w http.ResponseWriter, m proto.Message) {
	b, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(m)
	if err != nil {
		s.log.Error("encoding an answer", "err", err)
		s.writeError(w, fmtJSON, &apiError{status: 500, msg: "internal error: " + errInternal.Error()})
		return
	}
	w.Header()["Content-Type"] = s.ctJSON
	w.Write(append(b, '\n'))
}

// handleInfo is GET /v1/info[?namespace=n]: the InfoResponse message in JSON.
func (s *Server) handleInfo(w http.ResponseWriter, r *http.Request) {
	w.Header()[ServerHeader] = s.flurryServer
	res, e := s.info(r.Context(), r.URL.Query().Get("namespace"), header(r, "Authorization"))
	if e != nil {
		s.writeError(w, fmtJSON, e)
		return
	}
	s.writeProto(w, res)
}

// handleReady is GET /readyz: 200 "ready" when every namespace can issue now, else
// 503 with the reasons on one line. On a server with tokens it needs the admin
// token, or access.public_readyz, which answers the status word without reasons.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	reasons := true
	if s.protected {
		if e := s.authorizeAdmin(header(r, "Authorization")); e != nil {
			if !s.cfg.Access.PublicReadyz {
				s.writeError(w, fmtText, e)
				return
			}
			reasons = false
		}
	}
	var bad []string
	for _, ns := range s.order {
		if ok, why := s.ready(r.Context(), ns); !ok {
			bad = append(bad, "namespace "+ns.name+": "+why)
		}
	}
	bad = append(bad, s.compatNotReady()...)
	w.Header()["Content-Type"] = s.ctText
	if len(bad) > 0 {
		w.Header()["Retry-After"] = s.retryAfter1
		w.WriteHeader(http.StatusServiceUnavailable)
		if !reasons {
			w.Write([]byte("not ready\n"))
			return
		}
		w.Write([]byte("not ready: " + strings.Join(bad, "; ") + "\n"))
		return
	}
	w.Write([]byte("ready\n"))
}

// handleMetrics is GET /metrics: open on a server without tokens, else only with
// the admin token (its metrics describe every namespace).
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	if s.protected {
		if e := s.authorizeAdmin(header(r, "Authorization")); e != nil {
			s.writeError(w, fmtText, e)
			return
		}
	}
	s.metrics.h.ServeHTTP(w, r)
}

// rpc implements the IDService for connect-go.
type rpc struct{ s *Server }

var _ flurryv1connect.IDServiceHandler = (*rpc)(nil)

// Next issues IDs: IDService.Next. The answer is one message, built whole, so the
// request holds its whole count of the IDs budget until it is written.
func (x *rpc) Next(ctx context.Context, req *connect.Request[flurryv1.NextRequest]) (*connect.Response[flurryv1.NextResponse], error) {
	s := x.s
	start := time.Now()
	ns := s.namespaces[req.Msg.GetNamespace()]
	if ns == nil {
		return nil, s.errNotFound(req.Msg.GetNamespace()).connect()
	}
	if e := s.authorize(ns, req.Header().Get("Authorization")); e != nil {
		s.countError(ns, e)
		return nil, e.connect()
	}
	count := int(req.Msg.GetCount())
	if count == 0 {
		count = 1
	}
	var e *apiError
	switch {
	case count > ns.maxCount:
		e = errBadRequest("count %d is above the max_count %d of namespace %s; ask in several requests", count, ns.maxCount, ns.name)
	case int64(count) > s.budget.rpcMax():
		e = errBadRequest("count %d is more than one RPC answer may hold on this server (%d, a quarter of limits.max_ids_in_flight): ask in several requests, or use GET /v1/%s/next?count=%d, which streams", count, s.budget.rpcMax(), ns.name, count)
	case !s.budget.takeRPC(count):
		e = errBusy()
	}
	if e != nil {
		s.countError(ns, e)
		return nil, e.connect()
	}
	held, _ := ctx.Value(holdKey{}).(*rpcHeld)
	if held != nil {
		held.n += count
	} else {
		defer s.budget.give(count)
	}
	res := &flurryv1.NextResponse{Namespace: ns.name}
	var err error
	switch {
	case ns.text != nil:
		res.TextIds, err = s.rpcText(ctx, ns, count)
	case req.Msg.GetPackedIds():
		res.PackedIds, err = s.rpcPacked(ctx, ns, count, held)
	default:
		res.Ids, err = s.rpcInts(ctx, ns, count)
	}
	if err != nil {
		e := s.issueError(ns, err)
		s.countError(ns, e)
		return nil, e.connect()
	}
	ns.issued.Add(int64(count))
	ns.metrics.rpc.Observe(time.Since(start).Seconds())
	return connect.NewResponse(res), nil
}

// rpcInts issues count integer IDs for an RPC answer, through a pooled piece.
func (s *Server) rpcInts(ctx context.Context, ns *namespace, count int) ([]int64, error) {
	out := make([]int64, count)
	err := s.inPieces(ctx, ns, count, func(done int, ids []flurry.ID) {
		for i, id := range ids {
			out[done+i] = int64(id)
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// inPieces issues count IDs of ns through one pooled piece at a time and hands
// each piece to use, with how many IDs came before it.
func (s *Server) inPieces(ctx context.Context, ns *namespace, count int, use func(done int, ids []flurry.ID)) error {
	ip := s.idBufs.Get().(*[]flurry.ID)
	defer s.idBufs.Put(ip)
	ids := (*ip)[:cap(*ip)]
	for done := 0; done < count; {
		n := min(len(ids), count-done)
		if err := ns.nextN(ctx, ids[:n]); err != nil {
			return err
		}
		use(done, ids[:n])
		done += n
	}
	return nil
}

// rpcPacked issues count integer IDs for an RPC answer as packed_ids: 8 bytes
// each, little-endian, written straight from a pooled piece. The bytes come from
// a pool when held (the RPC's rpcHold) can give them back after the answer is
// written.
func (s *Server) rpcPacked(ctx context.Context, ns *namespace, count int, held *rpcHeld) ([]byte, error) {
	var out []byte
	if held != nil {
		bp, _ := s.packBufs.Get().(*[]byte)
		if bp == nil {
			bp = new([]byte)
		}
		if cap(*bp) < 8*count {
			*bp = make([]byte, 8*count)
		}
		held.buf = bp
		out = (*bp)[:8*count]
	} else {
		out = make([]byte, 8*count)
	}
	err := s.inPieces(ctx, ns, count, func(done int, ids []flurry.ID) {
		b := out[8*done : 8*(done+len(ids))]
		for i, id := range ids {
			binary.LittleEndian.PutUint64(b[8*i:], uint64(id))
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// rpcText issues count text IDs for an RPC answer. Each piece's IDs are
// substrings of one string, one allocation per piece rather than per ID.
func (s *Server) rpcText(ctx context.Context, ns *namespace, count int) ([]string, error) {
	out := make([]string, 0, count)
	bp := s.bufs.Get().(*[]byte)
	b := (*bp)[:0]
	defer func() {
		if cap(b) <= maxPooled {
			*bp = b[:0]
			s.bufs.Put(bp)
		}
	}()
	for len(out) < count {
		n := min(ns.piece, count-len(out))
		var err error
		if b, err = ns.text.appendNext(ctx, b[:0], n, '\n', false); err != nil {
			return nil, err
		}
		piece := string(b)
		for len(piece) > 0 {
			i := strings.IndexByte(piece, '\n')
			out = append(out, piece[:i])
			piece = piece[i+1:]
		}
	}
	return out, nil
}

// Decode splits an ID apart: IDService.Decode.
func (x *rpc) Decode(ctx context.Context, req *connect.Request[flurryv1.DecodeRequest]) (*connect.Response[flurryv1.DecodeResponse], error) {
	s := x.s
	ns := s.namespaces[req.Msg.GetNamespace()]
	if ns == nil {
		return nil, s.errNotFound(req.Msg.GetNamespace()).connect()
	}
	if e := s.authorize(ns, req.Header().Get("Authorization")); e != nil {
		return nil, e.connect()
	}
	res, e := s.decode(ns, req.Msg.GetId())
	if e != nil {
		return nil, e.connect()
	}
	return connect.NewResponse(res), nil
}

// Info describes the namespaces: IDService.Info.
func (x *rpc) Info(ctx context.Context, req *connect.Request[flurryv1.InfoRequest]) (*connect.Response[flurryv1.InfoResponse], error) {
	res, e := x.s.info(ctx, req.Msg.GetNamespace(), req.Header().Get("Authorization"))
	if e != nil {
		return nil, e.connect()
	}
	return connect.NewResponse(res), nil
}
