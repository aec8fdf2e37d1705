package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/flurryid/flurry"
)

// Meituan Leaf's routes (LeafController, LeafMonitorController), so Leaf's clients
// keep working against flurry:
//
//	GET /api/segment/get/{key}     the segment namespace serving tag key (or named key)
//	GET /api/snowflake/get/{key}   the snowflake namespace named key, else "default"
//	GET /decodeSnowflakeId?snowflakeId=ID[&namespace=n]
//
// An ID is answered as the bare decimal number, text/plain, as Leaf does. A failure
// is HTTP 500 with the JSON body Spring Boot 1.5 writes for Leaf's
// LeafServerException, with Leaf's codes (leafcompat.go).

// leafSegment serves GET /api/segment/get/{key}.
func (s *Server) leafSegment(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("key")
	if key == "" {
		// /api/segment/get/.json: Spring's suffix rule leaves an empty key, which
		// LeafController refuses (NoKeyException, @ResponseStatus 500 "Key is none").
		s.springError(w, r, http.StatusInternalServerError, "com.sankuai.inf.leaf.server.exception.NoKeyException", "Key is none")
		return
	}
	ns := s.segByTag[key]
	if ns == nil {
		if n := s.namespaces[key]; n != nil && n.alloc != nil {
			ns = n
		}
	}
	if ns == nil {
		if s.leafTags != nil {
			s.leafTagged(w, r, key)
			return
		}
		// Leaf: EXCEPTION_ID_KEY_NOT_EXISTS = -2.
		s.metrics.countCompat("leaf:", http.StatusNotFound)
		s.leafFail(w, r, leafNoKey, "no segment namespace serves tag "+strconv.Quote(clip(key)))
		return
	}
	s.leafIssue(w, r, ns, "tag "+strconv.Quote(clip(key)))
}

// leafSnowflake serves GET /api/snowflake/get/{key}. Leaf ignores the key for
// snowflake; flurry uses the integer namespace of that name when there is one, and
// the "default" namespace otherwise.
func (s *Server) leafSnowflake(w http.ResponseWriter, r *http.Request) {
	w.Header()[ServerHeader] = s.flurryServer // before any answer, errors too
	ns := s.namespaces[r.PathValue("key")]
	if ns == nil || ns.layout == nil {
		ns = s.namespaces["default"]
	}
	if ns == nil || ns.layout == nil {
		s.leafFail(w, r, -1, "no snowflake namespace named "+strconv.Quote(clip(r.PathValue("key")))+" and no snowflake namespace \"default\"")
		return
	}
	s.leafIssue(w, r, ns, "key "+strconv.Quote(clip(r.PathValue("key"))))
}

// leafIssue issues one ID of ns; what names ns in a 401 as the caller did (a tag
// or key), so that a tag's namespace is not told to a caller without its token.
func (s *Server) leafIssue(w http.ResponseWriter, r *http.Request, ns *namespace, what string) {
	start := time.Now()
	if e := s.authorizeAs(ns, what, header(r, "Authorization")); e != nil {
		s.countError(ns, e)
		s.leafAuthError(w, r, e)
		return
	}
	id, err := ns.ints.Next(r.Context()) // one ID: nothing from the budget (handleNext)
	if err != nil {
		e := s.issueError(ns, err)
		s.countError(ns, e)
		s.leafFail(w, r, leafCode(ns, err), e.msg)
		return
	}
	ns.issued.Add(1)
	bp := s.bufs.Get().(*[]byte)
	b := strconv.AppendInt((*bp)[:0], int64(id), 10)
	w.Header()["Content-Type"] = s.compat.text
	w.Write(b)
	*bp = b[:0]
	s.bufs.Put(bp)
	ns.metrics.leaf.Observe(time.Since(start).Seconds())
}

// leafAuthError answers a 401 (or the 429 of a token's rate) in Spring Boot 1.5's
// shape.
func (s *Server) leafAuthError(w http.ResponseWriter, r *http.Request, e *apiError) {
	switch {
	case e.status == 401 && e.auth == authWrong:
		w.Header()["Www-Authenticate"] = s.bearerInvalid
	case e.status == 401:
		w.Header()["Www-Authenticate"] = s.bearer
	case e.retry > 0:
		w.Header().Set("Retry-After", strconv.Itoa(e.retry))
	}
	s.springError(w, r, e.status, "", e.msg)
}

// leafDecode serves GET /decodeSnowflakeId?snowflakeId=ID in Leaf's shape:
//
//	{"workerId":"39","sequenceId":"3448","timestamp":"1567733700834(2019-09-06 09:35:00.834)"}
//
// Leaf computes the time with Twitter's epoch (1288834974657) and the bits of a
// 41/10/12 layout whatever its configuration; flurry uses the real layout and
// epoch of the namespace (?namespace=, default "default") when it decodes the
// value: workerId is every node field's bits together, as Leaf's 10 bits are.
// Any other number (negative, tiny, no snowflake namespace) gets Leaf's own
// arithmetic. The date is in the server's local time zone, as Java's
// SimpleDateFormat writes it. A value that is not a number gets Leaf's
// {"errorMsg":...} with status 200, as in Leaf.
func (s *Server) leafDecode(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name := q.Get("namespace")
	ns := s.namespaces[name]
	switch {
	case name == "":
		if ns = s.namespaces["default"]; ns != nil && ns.layout == nil {
			ns = nil
		}
	case ns == nil || ns.layout == nil:
		s.springError(w, r, http.StatusBadRequest, "", "no snowflake namespace "+strconv.Quote(clip(name))+"; name one with ?namespace=")
		return
	}
	if ns == nil && s.protected {
		// A server with tokens shows an anonymous caller no layout, not even
		// Leaf's fixed one.
		s.springError(w, r, http.StatusBadRequest, "", "no snowflake namespace \"default\"; name one with ?namespace=")
		return
	}
	if ns == nil {
		// No snowflake namespace: Leaf's own arithmetic below, which shows
		// nothing of the server.
	} else if e := s.authorize(ns, header(r, "Authorization")); e != nil {
		s.leafAuthError(w, r, e)
		return
	}
	if !q.Has("snowflakeId") {
		s.springError(w, r, http.StatusBadRequest, "org.springframework.web.bind.MissingServletRequestParameterException", "Required String parameter 'snowflakeId' is not present")
		return
	}
	raw := q.Get("snowflakeId")
	if ns != nil {
		if id, err := flurry.ParseID(raw); err == nil {
			if dec, err := ns.layout.Decode(id); err == nil {
				var worker int64
				for i, f := range ns.layout.NodeFields() {
					worker = worker<<f.Bits | dec.Nodes[i].Value
				}
				s.writeLeafDecode(w, dec.Time.UnixMilli(), worker, dec.Sequence)
				return
			}
		}
	}
	// Leaf's own arithmetic on any Java long (Long.parseLong), negative and tiny
	// values included.
	if id, err := strconv.ParseInt(raw, 10, 64); err == nil {
		ms, worker, seq := leafDecodeArith(id)
		s.writeLeafDecode(w, ms, worker, seq)
		return
	}
	w.Header()["Content-Type"] = s.compat.json
	w.Write([]byte(`{"errorMsg":"snowflake Id反解析发生异常!"}`))
}
