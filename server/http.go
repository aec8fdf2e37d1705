package server

import (
	"context"
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

// chunk is how many IDs are formatted before a write, for large counts.
const chunk = 4096

// maxPooled is the largest buffer put back into a pool (slog's rule: return only
// smaller buffers, so one huge request does not pin its memory).
const maxPooled = 64 << 10

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/{namespace}/next", s.handleNext)
	mux.HandleFunc("GET /v1/{namespace}/decode/{id}", s.handleDecode)
	mux.HandleFunc("GET /v1/info", s.handleInfo)

	path, h := flurryv1connect.NewIDServiceHandler(&rpc{s: s},
		connect.WithReadMaxBytes(int(s.maxBody)),
		connect.WithRecover(func(_ context.Context, _ connect.Spec, _ http.Header, p any) error {
			s.log.Error("panic in an RPC handler", "panic", p)
			return connect.NewError(connect.CodeInternal, errInternal)
		}))
	mux.Handle(path, http.MaxBytesHandler(h, s.maxBody))

	mux.HandleFunc("/api/segment/get/{key}", s.leafSegment)
	mux.HandleFunc("/api/snowflake/get/{key}", s.leafSnowflake)
	mux.HandleFunc("/decodeSnowflakeId", s.leafDecode)
	s.compatRoutes(mux)

	mux.Handle("GET /metrics", s.metrics.handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = s.ctText
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", s.handleReady)
	dash := dashboard.Handler()
	mux.Handle("GET /{$}", dash)
	mux.Handle("GET /assets/", dash)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, fmtJSON, &apiError{status: 404, msg: "no route " + r.Method + " " + clip(r.URL.Path) + "; see GET /v1/{namespace}/next, GET /v1/{namespace}/decode/{id}, GET /v1/info"})
	})
	return s.recoverer(mux)
}

// recoverer answers 500 instead of dropping the connection if a handler panics. It
// costs a deferred call, no allocation.
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
		h.ServeHTTP(w, r)
	})
}

// nextQuery reads count and format from a raw query without allocating for the
// usual forms (count=12&format=text).
func nextQuery(raw string, acceptText bool) (count int, format int, err *apiError) {
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
				return 0, 0, errBadRequest("malformed query %q", clip(kv))
			}
		}
		switch k {
		case "count", "n":
			n, perr := strconv.Atoi(v)
			if perr != nil || n < 1 || len(v) > 12 {
				return 0, 0, errBadRequest("count %q is not a whole number from 1 up", clip(v))
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
				return 0, 0, errBadRequest("format %q: use json (decimal strings), number or text", clip(v))
			}
		}
	}
	return count, format, nil
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

// handleNext is GET /v1/{namespace}/next: the hot path.
func (s *Server) handleNext(w http.ResponseWriter, r *http.Request) {
	start := s.opts.Clock.Now()
	count, format, qerr := nextQuery(r.URL.RawQuery, acceptsText(header(r, "Accept")))
	name := r.PathValue("namespace")
	ns := s.namespaces[name]
	switch {
	case ns == nil:
		s.writeError(w, format, errNotFound(name, s))
		return
	case !ns.authorized(header(r, "Authorization")):
		e := errUnauthorized(ns.name)
		s.countError(ns, e)
		s.writeError(w, format, e)
		return
	case qerr != nil:
		s.countError(ns, qerr)
		s.writeError(w, format, qerr)
		return
	case count > s.maxCount:
		e := errBadRequest("count %d is above this server's max_count %d; ask in several requests", count, s.maxCount)
		s.countError(ns, e)
		s.writeError(w, format, e)
		return
	}
	bp := s.bufs.Get().(*[]byte)
	b := (*bp)[:0]
	var err error
	if ns.text != nil {
		b, err = s.nextText(r.Context(), ns, b, count, format)
	} else if count == 1 {
		var id flurry.ID
		if id, err = ns.ints.Next(r.Context()); err == nil {
			b = s.appendIDs(b, ns, format, id, nil, true, true)
		}
	} else {
		b, err = s.nextInts(w, r.Context(), ns, b, count, format)
	}
	if err != nil {
		e := issueError(ns.name, err)
		s.countError(ns, e)
		s.writeError(w, format, e)
	} else {
		ns.issued.Add(int64(count))
		if len(b) > 0 {
			if format == fmtText {
				w.Header()["Content-Type"] = s.ctText
			} else {
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

// appendIDs appends ids (one, or a slice) in format; first and last say whether
// the opening and closing of a JSON body are written.
func (s *Server) appendIDs(b []byte, ns *namespace, format int, one flurry.ID, ids []flurry.ID, first, last bool) []byte {
	if ids == nil {
		ids = []flurry.ID{one}[:1:1] // does not escape: appendIDs is not retained
	}
	switch format {
	case fmtText:
		b = appendLines(b, ids)
	case fmtNumber:
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
			b, ps, pe = appendID(b, id, i > 0 && id == ids[i-1]+1, ps, pe)
		}
		if last {
			b = append(b, "]}\n"...)
		}
	default:
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
			b = append(b, '"')
			b, ps, pe = appendID(b, id, i > 0 && id == ids[i-1]+1, ps, pe)
			b = append(b, '"')
		}
		if last {
			b = append(b, "]}\n"...)
		}
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

// nextInts issues count IDs, then writes them in chunks; nothing is written
// unless every ID was issued, so an error still gets its status.
func (s *Server) nextInts(w http.ResponseWriter, ctx context.Context, ns *namespace, b []byte, count, format int) ([]byte, error) {
	ip := s.idBufs.Get().(*[]flurry.ID)
	ids := *ip
	if cap(ids) < count {
		ids = make([]flurry.ID, count)
	}
	ids = ids[:count]
	defer func() {
		if cap(ids) <= maxPooled/8 {
			*ip = ids[:0]
			s.idBufs.Put(ip)
		}
	}()
	if err := ns.nextN(ctx, ids); err != nil {
		return b, err
	}
	if format == fmtText {
		w.Header()["Content-Type"] = s.ctText
	} else {
		w.Header()["Content-Type"] = s.ctJSON
	}
	for i := 0; i < len(ids); i += chunk {
		end := min(i+chunk, len(ids))
		b = s.appendIDs(b, ns, format, 0, ids[i:end], i == 0, end == len(ids))
		if end < len(ids) {
			w.Write(b)
			b = b[:0]
		}
	}
	return b, nil
}

func (s *Server) nextText(ctx context.Context, ns *namespace, b []byte, count, format int) ([]byte, error) {
	if format == fmtText {
		return ns.text.appendNext(ctx, b, count, '\n')
	}
	b = append(b, `{"namespace":"`...)
	b = append(b, ns.name...)
	b = append(b, `","ids":[`...)
	start := len(b)
	b, err := ns.text.appendNext(ctx, b, count, ',')
	if err != nil {
		return b, err
	}
	// Quote each ID: text IDs hold no quote or comma.
	body := b[start : len(b)-1]
	out := make([]byte, 0, len(body)+2*count)
	for i, part := range strings.Split(string(body), ",") {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, '"')
		out = append(out, part...)
		out = append(out, '"')
	}
	b = append(b[:start], out...)
	return append(b, "]}\n"...), nil
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
		h["Www-Authenticate"] = s.bearer
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

// handleDecode is GET /v1/{namespace}/decode/{id}: the DecodeResponse message in
// JSON with the proto's field names.
func (s *Server) handleDecode(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("namespace")
	ns := s.namespaces[name]
	if ns == nil {
		s.writeError(w, fmtJSON, errNotFound(name, s))
		return
	}
	if !ns.authorized(r.Header.Get("Authorization")) {
		s.writeError(w, fmtJSON, errUnauthorized(ns.name))
		return
	}
	res, e := s.decode(ns, r.PathValue("id"))
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
		s.writeError(w, fmtJSON, &apiError{status: 500, msg: "encoding the answer: " + err.Error()})
		return
	}
	w.Header()["Content-Type"] = s.ctJSON
	w.Write(append(b, '\n'))
}

// handleInfo is GET /v1/info[?namespace=n]: the InfoResponse message in JSON.
func (s *Server) handleInfo(w http.ResponseWriter, r *http.Request) {
	res, e := s.info(r.Context(), r.URL.Query().Get("namespace"), r.Header.Get("Authorization"))
	if e != nil {
		s.writeError(w, fmtJSON, e)
		return
	}
	s.writeProto(w, res)
}

// handleReady is GET /readyz: 200 "ready" when every namespace can issue now, else
// 503 with the reasons on one line.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	var bad []string
	for _, ns := range s.order {
		if ok, why := ns.ready(r.Context()); !ok {
			bad = append(bad, "namespace "+ns.name+": "+why)
		}
	}
	bad = append(bad, s.compatNotReady()...)
	w.Header()["Content-Type"] = s.ctText
	if len(bad) > 0 {
		w.Header()["Retry-After"] = s.retryAfter1
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("not ready: " + strings.Join(bad, "; ") + "\n"))
		return
	}
	w.Write([]byte("ready\n"))
}

// rpc implements the IDService for connect-go.
type rpc struct{ s *Server }

var _ flurryv1connect.IDServiceHandler = (*rpc)(nil)

// Next issues IDs: IDService.Next.
func (x *rpc) Next(ctx context.Context, req *connect.Request[flurryv1.NextRequest]) (*connect.Response[flurryv1.NextResponse], error) {
	s := x.s
	start := time.Now()
	ns := s.namespaces[req.Msg.GetNamespace()]
	if ns == nil {
		return nil, errNotFound(req.Msg.GetNamespace(), s).connect()
	}
	if !ns.authorized(req.Header().Get("Authorization")) {
		e := errUnauthorized(ns.name)
		s.countError(ns, e)
		return nil, e.connect()
	}
	count := int(req.Msg.GetCount())
	if count == 0 {
		count = 1
	}
	if count > s.maxCount {
		e := errBadRequest("count %d is above this server's max_count %d; ask in several requests", count, s.maxCount)
		s.countError(ns, e)
		return nil, e.connect()
	}
	res := &flurryv1.NextResponse{Namespace: ns.name}
	if ns.text != nil {
		b, err := ns.text.appendNext(ctx, nil, count, '\n')
		if err != nil {
			e := issueError(ns.name, err)
			s.countError(ns, e)
			return nil, e.connect()
		}
		res.TextIds = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	} else {
		ids := make([]flurry.ID, count)
		if err := ns.nextN(ctx, ids); err != nil {
			e := issueError(ns.name, err)
			s.countError(ns, e)
			return nil, e.connect()
		}
		res.Ids = make([]int64, count)
		for i, id := range ids {
			res.Ids[i] = int64(id)
		}
	}
	ns.issued.Add(int64(count))
	ns.metrics.rpc.Observe(time.Since(start).Seconds())
	return connect.NewResponse(res), nil
}

// Decode splits an ID apart: IDService.Decode.
func (x *rpc) Decode(ctx context.Context, req *connect.Request[flurryv1.DecodeRequest]) (*connect.Response[flurryv1.DecodeResponse], error) {
	s := x.s
	ns := s.namespaces[req.Msg.GetNamespace()]
	if ns == nil {
		return nil, errNotFound(req.Msg.GetNamespace(), s).connect()
	}
	if !ns.authorized(req.Header().Get("Authorization")) {
		return nil, errUnauthorized(ns.name).connect()
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
