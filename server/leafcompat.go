package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/snowflake"
)

// What Leaf's server answers, as its source has it (Meituan-Dianping/Leaf):
//
//   - an ID: the number as text/plain;charset=UTF-8 (LeafController returns a
//     String; Spring Boot 1.5's StringHttpMessageConverter);
//   - a failed Result: HTTP 500 and Spring Boot 1.5's error body (leaf-server's
//     pom.xml: spring-boot 1.5.18; LeafServerException is
//     @ResponseStatus(INTERNAL_SERVER_ERROR)):
//     {"timestamp":1567733700834,"status":500,"error":"Internal Server Error",
//     "exception":"com.sankuai.inf.leaf.server.exception.LeafServerException",
//     "message":"Result{id=-2, status=EXCEPTION}","path":"/api/segment/get/x"}
//     with Leaf's codes (SegmentIDGenImpl): -1 the generator is not initialized,
//     -2 the key is not in the table, -3 both buffers are empty (the database did
//     not answer); and for snowflake (SnowflakeIDGenImpl) -1 and -3 for a clock
//     that went back. flurry gives -3 for every segment failure and for a clock
//     behind, -1 for other snowflake failures; the reason is logged, never sent.
const (
	leafCT        = "text/plain;charset=UTF-8"
	springJSON    = "application/json;charset=UTF-8"
	leafException = "com.sankuai.inf.leaf.server.exception.LeafServerException"
	leafNoKey     = -2
	leafNoBuffers = -3
)

// compatHeaders holds the header values of Leaf's and tinyid's routes.
type compatHeaders struct {
	text, json, html, allow []string
}

func newCompatHeaders() compatHeaders {
	return compatHeaders{text: []string{leafCT}, json: []string{springJSON}, html: []string{"text/html;charset=UTF-8"},
		allow: []string{"GET, POST"}}
}

// leafCode is the Result code Leaf would answer for a generator error.
func leafCode(ns *namespace, err error) int64 {
	if ns != nil && ns.alloc == nil {
		if errors.Is(err, snowflake.ErrClockBehind) {
			return -3
		}
		return -1
	}
	return leafNoBuffers
}

// leafFail answers a failed Result as Leaf does; detail goes to the log only.
func (s *Server) leafFail(w http.ResponseWriter, r *http.Request, code int64, detail string) {
	s.log.Warn("leaf route failed", "path", clip(r.URL.Path), "code", code, "reason", oneLine(detail))
	s.springError(w, r, http.StatusInternalServerError, leafException, "Result{id="+strconv.FormatInt(code, 10)+", status=EXCEPTION}")
}

// appendJSONString appends s as a JSON string, without escaping <, > and &, as
// Jackson writes it.
func appendJSONString(b []byte, s string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(s)
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), err
}

// leafTagged serves /api/segment/get/{key} from the leaf: table's tags.
func (s *Server) leafTagged(w http.ResponseWriter, r *http.Request, key string) {
	start := time.Now()
	ta, err := s.leafTags.get(r.Context(), key)
	if errors.Is(err, errNoTag) || errors.Is(err, segment.ErrUnknownTag) {
		s.metrics.countCompat(s.leafTags.subject(""), http.StatusNotFound)
		s.leafFail(w, r, leafNoKey, "tag "+strconv.Quote(clip(key))+" is not in the Leaf table")
		return
	}
	var one [1]flurry.ID
	if err == nil {
		err = ta.nextN(r.Context(), one[:])
	}
	if err != nil {
		s.metrics.countCompat(s.leafTags.subject(key), http.StatusServiceUnavailable)
		s.leafFail(w, r, leafNoBuffers, err.Error())
		return
	}
	w.Header()["Content-Type"] = s.compat.text
	w.Write(strconv.AppendInt(nil, int64(one[0]), 10))
	ta.observe(start)
}

// leafDecodeArith is LeafMonitorController.decodeSnowflakeId's arithmetic: the
// bits of Leaf's 41/10/12 layout from Twitter's epoch, on any long, negative ones
// included (Java's >> is arithmetic, as Go's on int64).
func leafDecodeArith(id int64) (ms, worker, seq int64) {
	return (id >> 22) + 1288834974657, (id >> 12) ^ (id >> 22 << 10), id ^ (id >> 12 << 12)
}

// writeLeafDecode writes decodeSnowflakeId's map in the order Leaf's HashMap
// iterates it: workerId, sequenceId, timestamp.
func (s *Server) writeLeafDecode(w http.ResponseWriter, ms, worker, seq int64) {
	b := []byte(`{"workerId":"`)
	b = strconv.AppendInt(b, worker, 10)
	b = append(b, `","sequenceId":"`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `","timestamp":"`...)
	b = strconv.AppendInt(b, ms, 10)
	b = append(b, '(')
	b = time.UnixMilli(ms).In(time.Local).AppendFormat(b, "2006-01-02 15:04:05.000")
	b = append(b, `)"}`...)
	w.Header()["Content-Type"] = s.compat.json
	w.Write(b)
}

// compatRoutes lists the patterns of Leaf's and tinyid's routes (spring.go), the
// trailing-slash form of Leaf's snowflake route (Spring MVC matches "/x/" where
// "/x" is mapped), and the stylesheet Leaf's pages link.
func (s *Server) compatRoutes() []route {
	return append(s.springPatterns(),
		route{"/api/snowflake/get/{key}/{$}", s.issuing(s.leafSnowflake)},
		route{"GET /css/bootstrap.min.css", http.HandlerFunc(s.leafStylesheet)},
	)
}

// issuing wraps a Leaf or tinyid route that issues IDs or takes a range. Such a
// route answers any method, as Spring maps it without one (tinyid's Java client
// POSTs), except the safe methods other than GET (RFC 9110): HEAD, OPTIONS (a
// browser's CORS preflight) and TRACE are sent by clients, proxies and link
// checkers on the promise that they change nothing, so they issue nothing and
// get 405 in Spring's shape (Spring answers OPTIONS itself, never calling the
// handler).
func (s *Server) issuing(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodHead, http.MethodOptions, http.MethodTrace:
			w.Header()["Allow"] = s.compat.allow
			s.springError(w, r, http.StatusMethodNotAllowed, "org.springframework.web.HttpRequestMethodNotSupportedException",
				"Request method '"+r.Method+"' not supported")
			return
		}
		h(w, r)
	})
}

// buildCompat starts the Leaf table mode and the tinyid mode when configured.
func (s *Server) buildCompat(ctx context.Context, b *builder) error {
	if l := s.cfg.Leaf; l != nil {
		ts, err := b.newTagSet(ctx, "leaf", l.Segment.Stores, l.Segment, l.Reload, true)
		if err != nil {
			return err
		}
		s.leafTags = ts
	}
	if c := s.cfg.TinyID; c != nil {
		t, err := b.newTinyServer(ctx, s, c)
		if err != nil {
			return err
		}
		s.tiny = t
	}
	return nil
}

func (s *Server) closeCompat(ctx context.Context) error {
	var errs []error
	if s.tiny != nil {
		errs = append(errs, s.tiny.close(ctx))
	}
	if s.leafTags != nil {
		errs = append(errs, s.leafTags.close(ctx))
	}
	return errors.Join(errs...)
}

// compatNotReady lists why the Leaf and tinyid modes cannot serve, for /readyz.
func (s *Server) compatNotReady() []string {
	var out []string
	for _, ts := range []*tagSet{s.leafTags, s.tinySet()} {
		if ts != nil {
			if why := ts.notReady(); why != "" {
				out = append(out, why)
			}
		}
	}
	return out
}

func (s *Server) tinySet() *tagSet {
	if s.tiny == nil {
		return nil
	}
	return s.tiny.set
}

// mayView reports whether a caller may see ns on the monitor pages: ns has no
// tokens, or the caller sent one of them. Nothing is spent from a budget.
func (s *Server) mayView(ns *namespace, header string) bool {
	if ns.tokens.empty() {
		return true
	}
	res, _ := ns.tokens.check(header)
	return res == authOK
}

// leafMonitorAllowed lets a caller see Leaf's monitor pages: anyone on a server
// without tokens (as on a Leaf server), else only with an admin token, as
// /metrics. It answers the refusal itself.
func (s *Server) leafMonitorAllowed(w http.ResponseWriter, r *http.Request) bool {
	if !s.protected {
		return true
	}
	if e := s.authorizeAdmin(header(r, "Authorization")); e != nil {
		s.leafAuthError(w, r, e)
		return false
	}
	return true
}
