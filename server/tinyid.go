package server

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/server/config"
)

// didi tinyid's HTTP routes, served on tinyid's own tables (tiny_id_info,
// tiny_id_token), so tinyid clients and tinyid servers keep working beside
// flurry. What each answers follows tinyid-server's source:
//
//	{prefix}/id/nextId?bizType=&token=&batchSize=     (IdContronller.nextId)
//	  {"data":[2,3],"code":200,"message":""}; bad token {"data":null,"code":5,"message":"token is error"};
//	  other failures code 6 with the error's message; always HTTP 200, JSON
//	{prefix}/id/nextIdSimple?...                       "2" or "2,3", empty on any error
//	{prefix}/id/nextSegmentId?bizType=&token=          {"data":{"maxId":..,"loadingId":..,"currentId":..,"delta":1,"remainder":0},...}
//	{prefix}/id/nextSegmentIdSimple?...                "currentId,loadingId,maxId,delta,remainder", empty on error
//
// Any method is accepted (@RequestMapping without a method; the Java client
// POSTs with the parameters in the query) but HEAD, OPTIONS and TRACE, which
// issue nothing (Server.issuing), and a trailing slash too, as Spring matches it. batchSize defaults to 1 and is capped at batch_size_max
// (checkBatchSize). Tokens map to biz types through tiny_id_token, read again every
// reload (TinyIdTokenServiceImpl.refresh, every minute).

// tinyStore is what the tinyid routes need of a store: segment/sqlstore's TinyID,
// the store of tinyid's own tables, has these methods. The server finds them by a
// type assertion, so that it need not import the SQL stores (a flurry without
// them cannot open tinyid's tables: their URLs fail first, with what to do).
type tinyStore interface {
	segment.Store
	Residue(ctx context.Context, tag string) (delta, remainder int64, err error)
	NextSegment(ctx context.Context, tag string) (segment.TinyIDSegment, error)
	Tokens(ctx context.Context) (map[string][]string, error)
}

// tinyServer serves tinyid's routes.
type tinyServer struct {
	s        *Server
	set      *tagSet
	stores   []tinyStore
	prefix   string
	batchMax int
	tokens   atomic.Pointer[map[string]map[string]bool]

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

func (b *builder) newTinyServer(ctx context.Context, s *Server, c *config.TinyIDCompat) (*tinyServer, error) {
	tune := &config.Segment{Runway: c.Runway, Target: c.Target, FetchTimeout: c.FetchTimeout, MaxStep: c.MaxStep, Prefetch: c.Prefetch}
	set, err := b.newTagSet(ctx, "tinyid", c.Stores, tune, c.Reload, false)
	if err != nil {
		return nil, err
	}
	t := &tinyServer{s: s, set: set, prefix: c.Prefix, batchMax: c.BatchSizeMax, stop: make(chan struct{}), done: make(chan struct{})}
	if t.prefix == "" {
		t.prefix = "/tinyid"
	}
	if t.batchMax == 0 {
		t.batchMax = config.DefaultTinyIDBatchMax
	}
	for i, st := range set.stores {
		ts, ok := st.(tinyStore)
		if !ok {
			set.close(ctx)
			return nil, fmt.Errorf("tinyid: store %s is not a tinyid table; add ?table=tiny_id_info to its URL", set.urls[i])
		}
		t.stores = append(t.stores, ts)
	}
	set.order = t.order
	empty := map[string]map[string]bool{}
	t.tokens.Store(&empty)
	t.loadTokens(ctx)
	go t.run(c.Reload.Or(config.DefaultReload))
	return t, nil
}

func (t *tinyServer) run(period time.Duration) {
	defer close(t.done)
	tk := time.NewTicker(period)
	defer tk.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tk.C:
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			t.loadTokens(ctx)
			cancel()
		}
	}
}

// loadTokens reads tiny_id_token from the first store that answers; on failure
// the last tokens stay, as in tinyid.
func (t *tinyServer) loadTokens(ctx context.Context) {
	var errs []error
	for _, st := range t.stores {
		toks, err := st.Tokens(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		m := make(map[string]map[string]bool, len(toks))
		for tok, bizs := range toks {
			set := make(map[string]bool, len(bizs))
			for _, b := range bizs {
				set[b] = true
			}
			m[tok] = set
		}
		t.tokens.Store(&m)
		return
	}
	t.set.log.Warn("reading tiny_id_token failed; keeping the last tokens", "err", errors.Join(errs...))
}

// tokenError counts a request refused for its token.
func (t *tinyServer) tokenError() {
	t.s.metrics.countCompat(t.set.subject(""), http.StatusUnauthorized)
}

// canVisit is TinyIdTokenServiceImpl.canVisit.
func (t *tinyServer) canVisit(biz, token string) bool {
	if biz == "" || token == "" {
		return false
	}
	return (*t.tokens.Load())[token][biz]
}

// order lists a biz type's stores by remainder, so that the allocator's residue
// classes (store k gives IDs = k mod N) become the rows' (id % delta ==
// remainder): allocator ID a is counter a/N of store a%N, whose ID is
// counter*delta + remainder.
func (t *tinyServer) order(ctx context.Context, tag string) ([]segment.Store, func(flurry.ID) flurry.ID, error) {
	type class struct {
		st      segment.Store
		d, r    int64
		storeNo int
	}
	cs := make([]class, len(t.stores))
	for i, st := range t.stores {
		d, r, err := st.Residue(ctx, tag)
		if err != nil {
			return nil, nil, err
		}
		cs[i] = class{st, d, r, i}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].r < cs[j].r })
	for i := 1; i < len(cs); i++ {
		if cs[i].d != cs[0].d || cs[i].r == cs[i-1].r {
			return nil, nil, fmt.Errorf("biz_type %s: the databases' rows must share one delta and have distinct remainders (tinyid's rule for several databases); they have delta/remainder %d/%d and %d/%d",
				tag, cs[i-1].d, cs[i-1].r, cs[i].d, cs[i].r)
		}
	}
	n := int64(len(cs))
	d := cs[0].d
	rem := make([]int64, n)
	stores := make([]segment.Store, n)
	for i, c := range cs {
		rem[i], stores[i] = c.r, c.st
	}
	return stores, func(a flurry.ID) flurry.ID { return flurry.ID(int64(a)/n*d + rem[int64(a)%n]) }, nil
}

func (t *tinyServer) close(ctx context.Context) error {
	t.once.Do(func() { close(t.stop) })
	<-t.done
	return t.set.close(ctx)
}

// handlers are tinyid's routes under {prefix}/id/, by name.
func (t *tinyServer) handlers() map[string]http.HandlerFunc {
	return map[string]http.HandlerFunc{
		"nextId": t.nextID, "nextIdSimple": t.nextIDSimple,
		"nextSegmentId": t.nextSegment, "nextSegmentIdSimple": t.nextSegmentSimple,
	}
}

// params reads tinyid's parameters from the query and, for a form POST, the body,
// as Spring binds them.
func tinyParams(r *http.Request) (biz, token, batch string) {
	r.Body = http.MaxBytesReader(nil, r.Body, 64<<10)
	r.ParseForm()
	return r.Form.Get("bizType"), r.Form.Get("token"), r.Form.Get("batchSize")
}

// batchSize is checkBatchSize; ok is false when the value is not an Integer
// (Spring answers 400 before the handler runs).
func (t *tinyServer) batchSize(raw string) (int, bool) {
	if raw == "" {
		return 1, true
	}
	n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 32)
	if err != nil {
		return 0, false
	}
	return min(int(n), t.batchMax), true
}

// ids issues n IDs of biz; the error's text is what tinyid would put in message.
// It records the request in the metrics.
func (t *tinyServer) ids(ctx context.Context, biz string, n int) ([]flurry.ID, error) {
	start := time.Now()
	tag := t.set.canonical(biz)
	ta, err := t.set.get(ctx, tag)
	if err != nil {
		t.set.log.Warn("tinyid: no allocator for the biz type", "bizType", clip(biz), "err", err)
		if errors.Is(err, segment.ErrUnknownTag) || errors.Is(err, errNoTag) {
			t.s.metrics.countCompat(t.set.subject(""), http.StatusNotFound)
			// CachedIdGenerator.querySegmentId wrapping DbSegmentIdServiceImpl's message.
			return nil, errors.New("error query segmentId: can not find biztype:" + biz)
		}
		t.s.metrics.countCompat(t.set.subject(tag), http.StatusServiceUnavailable)
		return nil, errors.New("error query segmentId: " + tinyCause(err))
	}
	if n < 1 {
		return nil, nil
	}
	ids := make([]flurry.ID, n)
	if err := ta.nextN(ctx, ids); err != nil {
		t.set.log.Warn("tinyid: issuing failed", "bizType", clip(biz), "err", err)
		t.s.metrics.countCompat(t.set.subject(tag), http.StatusServiceUnavailable)
		return nil, errors.New("error query segmentId: " + tinyCause(err))
	}
	ta.observe(start)
	return ids, nil
}

// tinyCause says what class of failure err is, for tinyid's code-6 message,
// where tinyid puts the exception's message: the database's own words may name
// hosts, users and databases, so flurry says only which it was (the log has the
// rest).
func tinyCause(err error) string {
	switch {
	case errors.Is(err, segment.ErrStoreDenied):
		return "the database denied access (check the grants of flurry's database user)"
	case errors.Is(err, segment.ErrStoreNoTable):
		return "the table does not exist in the database"
	case errors.Is(err, segment.ErrStoreUnreachable):
		return "the database did not answer"
	}
	return "the database failed (see flurry's log)"
}

func (t *tinyServer) writeJSON(w http.ResponseWriter, b []byte) {
	w.Header()["Content-Type"] = t.s.compat.json
	w.Write(b)
}

func (t *tinyServer) writeText(w http.ResponseWriter, b []byte) {
	w.Header()["Content-Type"] = t.s.compat.text
	w.Write(b)
}

// response writes tinyid's Response{data, code, message}; data is raw JSON.
func tinyResponse(data []byte, code int, msg string) []byte {
	b := append([]byte(`{"data":`), data...)
	b = append(b, `,"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	b, _ = appendJSONString(b, msg)
	return append(b, '}')
}

// ErrorCode of tinyid-server: TOKEN_ERR(5, "token is error"), SYS_ERR(6, ...).
const (
	tinyOK       = 200
	tinyTokenErr = 5
	tinySysErr   = 6
)

func (t *tinyServer) badInteger(w http.ResponseWriter, r *http.Request, raw string) {
	t.s.springError(w, r, http.StatusBadRequest, "org.springframework.web.method.annotation.MethodArgumentTypeMismatchException",
		"Failed to convert value of type 'java.lang.String' to required type 'java.lang.Integer'; nested exception is java.lang.NumberFormatException: For input string: \""+clip(raw)+"\"")
}

func (t *tinyServer) nextID(w http.ResponseWriter, r *http.Request) {
	biz, token, raw := tinyParams(r)
	n, ok := t.batchSize(raw)
	if !ok {
		t.badInteger(w, r, raw)
		return
	}
	if !t.canVisit(biz, token) {
		t.tokenError()
		t.writeJSON(w, tinyResponse([]byte("null"), tinyTokenErr, "token is error"))
		return
	}
	ids, err := t.ids(r.Context(), biz, n)
	if err != nil {
		t.writeJSON(w, tinyResponse([]byte("null"), tinySysErr, err.Error()))
		return
	}
	data := []byte{'['}
	for i, id := range ids {
		if i > 0 {
			data = append(data, ',')
		}
		data = strconv.AppendInt(data, int64(id), 10)
	}
	t.writeJSON(w, tinyResponse(append(data, ']'), tinyOK, ""))
}

func (t *tinyServer) nextIDSimple(w http.ResponseWriter, r *http.Request) {
	biz, token, raw := tinyParams(r)
	n, ok := t.batchSize(raw)
	if !ok {
		t.badInteger(w, r, raw)
		return
	}
	if !t.canVisit(biz, token) {
		t.tokenError()
		t.writeText(w, nil)
		return
	}
	ids, err := t.ids(r.Context(), biz, n)
	if err != nil || len(ids) == 0 {
		// An error, or batchSize < 1: tinyid's StringBuilder.deleteCharAt(-1)
		// throws and the handler answers "".
		t.writeText(w, nil)
		return
	}
	var b []byte
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(id), 10)
	}
	t.writeText(w, b)
}

// segment takes a range exactly as tinyid's getNextSegmentId does, from one of
// the databases at random (tinyid's DynamicDataSource).
func (t *tinyServer) segment(ctx context.Context, biz string) (segment.TinyIDSegment, error) {
	start := time.Now()
	k := rand.IntN(len(t.stores))
	var errs []error
	tag := t.set.canonical(biz)
	for i := range t.stores {
		seg, err := t.stores[(k+i)%len(t.stores)].NextSegment(ctx, tag)
		if err == nil {
			t.s.metrics.latency.WithLabelValues(t.set.subject(tag), "tinyid").Observe(time.Since(start).Seconds())
			return seg, nil
		}
		if errors.Is(err, segment.ErrUnknownTag) {
			t.s.metrics.countCompat(t.set.subject(""), http.StatusNotFound)
			return seg, errors.New("can not find biztype:" + biz)
		}
		errs = append(errs, err)
	}
	t.s.metrics.countCompat(t.set.subject(tag), http.StatusServiceUnavailable)
	err := errors.Join(errs...)
	t.set.log.Warn("tinyid: nextSegmentId failed", "bizType", clip(biz), "err", err)
	return segment.TinyIDSegment{}, errors.New("get next segmentId failed: " + tinyCause(err))
}

func (t *tinyServer) nextSegment(w http.ResponseWriter, r *http.Request) {
	biz, token, _ := tinyParams(r)
	if !t.canVisit(biz, token) {
		t.tokenError()
		t.writeJSON(w, tinyResponse([]byte("null"), tinyTokenErr, "token is error"))
		return
	}
	seg, err := t.segment(r.Context(), biz)
	if err != nil {
		t.writeJSON(w, tinyResponse([]byte("null"), tinySysErr, err.Error()))
		return
	}
	// Jackson writes SegmentId's properties in field order.
	d := fmt.Appendf(nil, `{"maxId":%d,"loadingId":%d,"currentId":%d,"delta":%d,"remainder":%d}`,
		seg.MaxID, seg.LoadingID, seg.CurrentID, seg.Delta, seg.Remainder)
	t.writeJSON(w, tinyResponse(d, tinyOK, ""))
}

func (t *tinyServer) nextSegmentSimple(w http.ResponseWriter, r *http.Request) {
	biz, token, _ := tinyParams(r)
	if !t.canVisit(biz, token) {
		t.tokenError()
		t.writeText(w, nil)
		return
	}
	seg, err := t.segment(r.Context(), biz)
	if err != nil {
		t.writeText(w, nil)
		return
	}
	t.writeText(w, fmt.Appendf(nil, "%d,%d,%d,%d,%d", seg.CurrentID, seg.LoadingID, seg.MaxID, seg.Delta, seg.Remainder))
}
