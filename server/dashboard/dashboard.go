// Package dashboard serves flurry's web dashboard: one page that shows a server's
// namespaces and their live state (readiness, issue rate, layout life left, lease
// and high-water mark, segment buffers and runway) with a chart per namespace of
// its rate and runway over the last minutes, decodes an ID and issues a few IDs on
// demand.
//
// The page is plain HTML, CSS and JavaScript embedded in the binary: nothing is
// built at run time and nothing is loaded from another origin. In the browser it
// calls the server's IDService over the Connect protocol as JSON
// (POST /flurry.v1.IDService/Info, .../Decode, .../Next) on the same origin, polling
// Info every second (the charts' history is kept in the page, not on the
// server), so Handler must be mounted on the same server as the IDService
// handler, at "/":
//
//	mux.Handle("/flurry.v1.IDService/", connectHandler)
//	mux.Handle("/", dashboard.Handler())
//
// The handler answers GET and HEAD for "/" and the files under "/assets/", and 404
// for every other path (so it can be the catch-all of a mux); it never lists a
// directory. Every response carries a Content-Security-Policy that allows only the
// page's own scripts, styles and same-origin requests.
package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// CSP is the Content-Security-Policy of every response of the handler: scripts,
// styles and images from the page's own origin only, requests only to it, no
// frames, forms, plugins or base URL changes.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// assetPrefix is where the page's files are served; the index refers to them with
// a ?v=<content hash> query so that a browser may cache them for good.
const assetPrefix = "/assets/"

type file struct {
	body  []byte
	ctype string
	etag  string
	hash  string // first 12 hex digits of the body's SHA-256
}

type handler struct {
	index  file
	assets map[string]file // by name under assetPrefix
}

// Handler returns the dashboard's HTTP handler, to be mounted at "/" of the server
// that serves the IDService. Its files are read from the binary once, at the
// call; handlers are safe for concurrent use and may be shared.
func Handler() http.Handler {
	h := &handler{assets: make(map[string]file)}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "static/")
		if name == "index.html" {
			h.index = newFile(name, b)
			return nil
		}
		h.assets[name] = newFile(name, b)
		return nil
	})
	if err != nil || h.index.body == nil {
		// The files are compiled in; failing here is a broken build.
		panic("dashboard: embedded files: " + errString(err))
	}
	// Point the index at the current version of every asset, so that a new binary's
	// page never runs with an old cached script.
	idx := string(h.index.body)
	for name, f := range h.assets {
		ref := `"` + assetPrefix + name + `"`
		idx = strings.ReplaceAll(idx, ref, `"`+assetPrefix+name+"?v="+f.hash+`"`)
	}
	h.index = newFile("index.html", []byte(idx))
	return h
}

func errString(err error) string {
	if err == nil {
		return "no index.html"
	}
	return err.Error()
}

func newFile(name string, b []byte) file {
	sum := sha256.Sum256(b)
	hash := hex.EncodeToString(sum[:])[:12]
	return file{body: b, ctype: contentType(name), etag: `"` + hash + `"`, hash: hash}
}

// contentType is by extension only: the set of embedded files is known, and
// mime.TypeByExtension depends on the machine's /etc/mime.types.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".ico":
		return "image/x-icon"
	}
	return "application/octet-stream"
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", CSP)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")

	var f file
	immutable := false
	switch p := r.URL.Path; {
	case p == "/" || p == "/index.html":
		f = h.index
	case strings.HasPrefix(p, assetPrefix):
		a, ok := h.assets[strings.TrimPrefix(p, assetPrefix)]
		if !ok {
			http.NotFound(w, r)
			return
		}
		f = a
		immutable = r.URL.Query().Get("v") == a.hash
	default:
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	hd.Set("Content-Type", f.ctype)
	hd.Set("ETag", f.etag)
	if immutable {
		// The URL names this exact content: keep it for a year.
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		// The page itself (and an asset asked for without its hash): always
		// revalidate, which costs a 304 when nothing changed.
		hd.Set("Cache-Control", "no-cache")
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
}
