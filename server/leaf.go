package server

import (
	"encoding/json"
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
// is HTTP 500 with the JSON body Spring Boot writes for Leaf's LeafServerException:
//
//	{"timestamp":"2026-01-02T03:04:05.678+00:00","status":500,"error":"Internal Server Error","message":"...","path":"/api/segment/get/x"}

// leafSegment serves GET /api/segment/get/{key}.
func (s *Server) leafSegment(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("key")
	ns := s.segByTag[key]
	if ns == nil {
		if n := s.namespaces[key]; n != nil && n.alloc != nil {
			ns = n
		}
	}
	if ns == nil {
		// Leaf: EXCEPTION_ID_KEY_NOT_EXISTS = -2.
		s.leafError(w, r, "Result{id=-2, status=EXCEPTION}: no segment namespace serves tag "+strconv.Quote(clip(key)))
		return
	}
	s.leafIssue(w, r, ns, "tag "+strconv.Quote(clip(key)))
}

// leafSnowflake serves GET /api/snowflake/get/{key}. Leaf ignores the key for
// snowflake; flurry uses the integer namespace of that name when there is one, and
// the "default" namespace otherwise.
func (s *Server) leafSnowflake(w http.ResponseWriter, r *http.Request) {
	ns := s.namespaces[r.PathValue("key")]
	if ns == nil || ns.layout == nil {
		ns = s.namespaces["default"]
	}
	if ns == nil || ns.layout == nil {
		s.leafError(w, r, "Result{id=-1, status=EXCEPTION}: no snowflake namespace named "+strconv.Quote(clip(r.PathValue("key")))+" and no snowflake namespace \"default\"")
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
		s.leafError(w, r, "Result{id=0, status=EXCEPTION}: "+e.msg)
		return
	}
	ns.issued.Add(1)
	bp := s.bufs.Get().(*[]byte)
	b := strconv.AppendInt((*bp)[:0], int64(id), 10)
	w.Header()["Content-Type"] = s.ctText
	w.Write(b)
	*bp = b[:0]
	s.bufs.Put(bp)
	ns.metrics.leaf.Observe(time.Since(start).Seconds())
}

// leafAuthError answers a 401 (or the 429 of a token's rate) in Spring Boot's shape.
func (s *Server) leafAuthError(w http.ResponseWriter, r *http.Request, e *apiError) {
	switch {
	case e.status == 401 && e.auth == authWrong:
		w.Header()["Www-Authenticate"] = s.bearerInvalid
	case e.status == 401:
		w.Header()["Www-Authenticate"] = s.bearer
	case e.retry > 0:
		w.Header().Set("Retry-After", strconv.Itoa(e.retry))
	}
	s.leafErrorStatus(w, r, e.status, http.StatusText(e.status), e.msg)
}

func (s *Server) leafError(w http.ResponseWriter, r *http.Request, msg string) {
	s.leafErrorStatus(w, r, http.StatusInternalServerError, "Internal Server Error", msg)
}

// leafErrorStatus writes Spring Boot's error body.
func (s *Server) leafErrorStatus(w http.ResponseWriter, r *http.Request, status int, reason, msg string) {
	body, _ := json.Marshal(struct {
		Timestamp string `json:"timestamp"`
		Status    int    `json:"status"`
		Error     string `json:"error"`
		Message   string `json:"message"`
		Path      string `json:"path"`
	}{time.Now().UTC().Format("2006-01-02T15:04:05.000-07:00"), status, reason, oneLine(msg), r.URL.Path})
	w.Header()["Content-Type"] = s.ctJSON
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

// leafDecode serves GET /decodeSnowflakeId?snowflakeId=ID in Leaf's shape:
//
//	{"timestamp":"1567733700834(2019-09-06 09:35:00.834)","sequenceId":"3448","workerId":"39"}
//
// Leaf computes the time with Twitter's epoch (1288834974657) and the bits of a
// 41/10/12 layout whatever its configuration; flurry uses the real layout and
// epoch of the namespace (?namespace=, default "default"): workerId is every node
// field's bits together, as Leaf's 10 bits are. The date is in the server's local
// time zone, as Java's SimpleDateFormat writes it. A value that is not a number
// gets Leaf's {"errorMsg":...} with status 200, as in Leaf.
func (s *Server) leafDecode(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name := q.Get("namespace")
	if name == "" {
		name = "default"
	}
	ns := s.namespaces[name]
	if ns == nil || ns.layout == nil {
		s.leafErrorStatus(w, r, http.StatusBadRequest, "Bad Request", "no snowflake namespace "+strconv.Quote(clip(name))+"; name one with ?namespace=")
		return
	}
	if e := s.authorize(ns, header(r, "Authorization")); e != nil {
		s.leafAuthError(w, r, e)
		return
	}
	if !q.Has("snowflakeId") {
		s.leafErrorStatus(w, r, http.StatusBadRequest, "Bad Request", "Required String parameter 'snowflakeId' is not present")
		return
	}
	out := map[string]string{}
	ok := false
	if id, err := flurry.ParseID(q.Get("snowflakeId")); err == nil {
		if dec, err := ns.layout.Decode(id); err == nil {
			ok = true
			ms := dec.Time.UnixMilli()
			out["timestamp"] = strconv.FormatInt(ms, 10) + "(" + dec.Time.In(time.Local).Format("2006-01-02 15:04:05.000") + ")"
			var worker int64
			for i, f := range ns.layout.NodeFields() {
				worker = worker<<f.Bits | dec.Nodes[i].Value
			}
			out["workerId"] = strconv.FormatInt(worker, 10)
			out["sequenceId"] = strconv.FormatInt(dec.Sequence, 10)
		}
	}
	if !ok {
		out["errorMsg"] = "snowflake Id反解析发生异常!"
	}
	body, _ := json.Marshal(out)
	w.Header()["Content-Type"] = s.ctJSON
	w.Write(append(body, '\n'))
}
