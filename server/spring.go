package server

import (
	"html"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Leaf's and tinyid's servers are Spring Boot 1.5 applications (Leaf's
// leaf-server: 1.5.18; tinyid-server: 1.5.9), so their routes match paths as
// Spring MVC 4.3 does with its defaults, and a path they do not map gets Spring
// Boot's error answer. flurry mirrors that on their paths:
//
//   - suffix pattern matching: /api/segment/get/{key} also matches
//     /api/segment/get/{key}.{anything}, the key ending at the last dot
//     (/api/segment/get/cx.json and cx.dot are key cx; a.b.c is a.b), and
//     /cache.json, /tinyid/id/nextIdSimple.json and the like are their routes.
//     A trailing slash matches too, without the suffix rule (cx.json/ is key
//     cx.json). Spring also picks the answer's Content-Type from such an
//     extension (and may refuse with 406); flurry answers with the route's own.
//   - ";name=value" path parameters are ignored, as Spring removes them.
//   - a path under Leaf's or tinyid's routes that names no route gets Spring
//     Boot's 404: {"timestamp":...,"status":404,"error":"Not Found","message":
//     "No message available","path":"/api/x"}, or its Whitelabel Error Page for a
//     client that asks for HTML.
//
// Every error on these routes comes in the same two forms: the JSON body of
// Spring Boot 1.5's DefaultErrorAttributes, or, when the Accept header names
// text/html or text/* (a browser's does), the HTML page of its
// BasicErrorController.errorHtml.

// springRoute is one of Leaf's or tinyid's routes: its path's segments, the last
// of which may be the variable {key}.
type springRoute struct {
	segs []string
	h    http.Handler
}

// springRoutes lists Leaf's routes but the snowflake one (ServeMux serves
// /api/snowflake/get/{key} itself), and tinyid's when configured.
func (s *Server) springRoutes() []springRoute {
	rs := []springRoute{
		{[]string{"api", "segment", "get", "{key}"}, s.issuing(s.leafSegment)},
		{[]string{"decodeSnowflakeId"}, http.HandlerFunc(s.leafDecode)},
		{[]string{"cache"}, http.HandlerFunc(s.leafCache)},
		{[]string{"db"}, http.HandlerFunc(s.leafDB)},
	}
	if s.tiny != nil {
		prefix := strings.Split(strings.Trim(s.tiny.prefix, "/"), "/")
		for name, h := range s.tiny.handlers() {
			rs = append(rs, springRoute{append(append([]string{}, prefix...), "id", name), s.issuing(h)})
		}
	}
	return rs
}

// springPatterns are the ServeMux patterns that bring a request to springServe:
// each route with and without a trailing slash, and the paths under Leaf's and
// tinyid's routes, for the suffix forms and Spring's 404. /cache.json and the
// like come through the server's catch-all (springTakes).
func (s *Server) springPatterns() []route {
	h := http.HandlerFunc(s.springServe)
	var rs []route
	for _, sr := range s.spring {
		p := "/" + strings.Join(sr.segs, "/")
		rs = append(rs, route{p, h}, route{p + "/{$}", h})
	}
	for _, p := range []string{"/api/", "/cache/", "/db/", "/decodeSnowflakeId/", "/css/"} {
		rs = append(rs, route{p, h})
	}
	if s.tiny != nil {
		rs = append(rs, route{s.tiny.prefix + "/", h})
	}
	return rs
}

// springTakes reports whether the server's catch-all should hand path to
// springServe: a suffix form of a route with one segment (/cache.json).
func (s *Server) springTakes(path string) bool {
	for _, sr := range s.spring {
		if len(sr.segs) == 1 && strings.HasPrefix(path, "/"+sr.segs[0]+".") {
			return true
		}
	}
	return false
}

// springServe routes a request on Leaf's and tinyid's paths as Spring MVC does.
func (s *Server) springServe(w http.ResponseWriter, r *http.Request) {
	p := springLookupPath(r.URL.Path)
	for _, sr := range s.spring {
		if key, ok := springMatch(sr.segs, p); ok {
			if sr.segs[len(sr.segs)-1] == "{key}" {
				r.SetPathValue("key", key)
			}
			sr.h.ServeHTTP(w, r)
			return
		}
	}
	s.springError(w, r, http.StatusNotFound, "", "No message available")
}

// springLookupPath removes path parameters (";jsessionid=..." and any other
// ";..." up to the next slash), as Spring's UrlPathHelper does.
func springLookupPath(p string) string {
	if !strings.Contains(p, ";") {
		return p
	}
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		segs[i], _, _ = strings.Cut(seg, ";")
	}
	return strings.Join(segs, "/")
}

// springMatch matches path against a route's segments as Spring MVC 4.3's
// PatternsRequestCondition does with its defaults: first the pattern with ".*"
// appended (suffix pattern matching), then the pattern, then the pattern with a
// trailing slash. It returns the value of a last {key} segment: in the suffix
// form, what comes before the last dot.
func springMatch(segs []string, path string) (string, bool) {
	trailing := len(path) > 1 && strings.HasSuffix(path, "/")
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) != len(segs) {
		return "", false
	}
	n := len(segs) - 1
	for i := 0; i < n; i++ {
		if parts[i] != segs[i] {
			return "", false
		}
	}
	last, got := segs[n], parts[n]
	if last == "{key}" {
		if got == "" {
			return "", false
		}
		if i := strings.LastIndexByte(got, '.'); i >= 0 && !trailing {
			return got[:i], true
		}
		return got, true
	}
	if got == last || !trailing && strings.HasPrefix(got, last+".") {
		return "", true
	}
	return "", false
}

// wantsHTML reports whether Spring Boot's BasicErrorController would answer r
// with its HTML page: its errorHtml method produces text/html and wins when the
// first acceptable type, most specific first, that either method matches is
// text/html or text/* (*/* goes to the JSON method; other types match neither).
func wantsHTML(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			mt = strings.ToLower(strings.TrimSpace(mt))
			if mt != "text/html" && mt != "text/*" {
				continue
			}
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				if k, val, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.TrimSpace(k) == "q" {
					if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
						q = f
					}
				}
			}
			if q > 0 {
				return true
			}
		}
	}
	return false
}

// springError writes Spring Boot 1.5's error answer: for a client that asks for
// HTML its Whitelabel Error Page, else the JSON of DefaultErrorAttributes (the
// timestamp in epoch milliseconds, then status, error, exception, message,
// path). exception is left out when empty, as Spring does for an error that
// carries none (a 404). The details of a failure go to the log, never here.
func (s *Server) springError(w http.ResponseWriter, r *http.Request, status int, exception, msg string) {
	msg = oneLine(msg)
	path := r.URL.EscapedPath() // the request URI as sent, as Tomcat reports it
	if wantsHTML(r) {
		// SpEL writes the timestamp, a java.util.Date, with Date.toString, and
		// every value HTML-escaped (Spring's HtmlUtils).
		var b strings.Builder
		b.WriteString("<html><body><h1>Whitelabel Error Page</h1><p>This application has no explicit mapping for /error, so you are seeing this as a fallback.</p><div id='created'>")
		b.WriteString(springEscape(time.Now().Format("Mon Jan 02 15:04:05 MST 2006")))
		b.WriteString("</div><div>There was an unexpected error (type=")
		b.WriteString(springEscape(http.StatusText(status)))
		b.WriteString(", status=" + strconv.Itoa(status) + ").</div><div>")
		b.WriteString(springEscape(msg))
		b.WriteString("</div></body></html>\n") // Spring writes no newline; flurry ends every error body with one
		w.Header()["Content-Type"] = s.compat.html
		w.WriteHeader(status)
		w.Write([]byte(b.String()))
		return
	}
	b := []byte(`{"timestamp":`)
	b = strconv.AppendInt(b, time.Now().UnixMilli(), 10)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"error":`...)
	b = strconv.AppendQuote(b, http.StatusText(status))
	if exception != "" {
		b = append(b, `,"exception":`...)
		b = strconv.AppendQuote(b, exception)
	}
	b = append(b, `,"message":`...)
	b, _ = appendJSONString(b, msg)
	b = append(b, `,"path":`...)
	b, _ = appendJSONString(b, path)
	b = append(b, "}\n"...) // as above
	w.Header()["Content-Type"] = s.compat.json
	w.WriteHeader(status)
	w.Write(b)
}

// springEscape is Spring's HtmlUtils.htmlEscape for the characters that matter:
// &, <, >, " and ' (as &#39;).
func springEscape(s string) string {
	return strings.ReplaceAll(html.EscapeString(s), "&#34;", "&quot;")
}
