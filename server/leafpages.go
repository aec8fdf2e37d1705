package server

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/flurryid/flurry/internal/javahash"
	"github.com/flurryid/flurry/segment"
)

// Leaf's monitor pages, /cache and /db (LeafMonitorController), as its FreeMarker
// templates segment.ftl and db.ftl show them under Spring Boot 1.5 on Java 8:
//
//   - the same table: its class, its columns in order (/cache: name, init,
//     next, pos, value0, max0, step0, value1, max1, step1; /db: tag, max, step,
//     update), a row per tag;
//   - numbers as FreeMarker's default number format writes them, grouped by the
//     request's locale (Accept-Language, as Spring's AcceptHeaderLocaleResolver
//     reads it; 2,001 without one): Java 8's grouping separators;
//   - /cache lists every tag of leaf_alloc, as Leaf's cache holds every row
//     (SegmentIDGenImpl.updateCacheFromDb), those never asked for with init false
//     and zeros, in the order FreeMarker iterates Leaf's HashMap of them
//     (internal/javahash);
//   - /db lists the rows with Leaf's own statement, in the order the database
//     gives them, update_time as Leaf shows it (segment.LeafAlloc);
//   - the stylesheet the pages link, /css/bootstrap.min.css, is served (a small
//     one of flurry's own, not Bootstrap).
//
// Leaf's templates do not escape names; flurry does, so a name can never be
// markup. A Leaf segment that is used up and not yet reloaded keeps its old
// numbers on Leaf's page; flurry shows zeros for a buffer it does not hold.

// leafAllocLister is what the SQL stores of Leaf's table (and of flurry's, which
// has Leaf's columns) offer beside segment.Store: the rows as Leaf reads them. The
// server finds it by a type assertion, as tinyStore.
type leafAllocLister interface {
	LeafAllocs(ctx context.Context) ([]segment.LeafAlloc, error)
}

// listInOrder lists st's tags and their names in the order Leaf's server would
// get them from the database: the rows' order when st lists rows as Leaf does,
// else by name.
func listInOrder(ctx context.Context, st segment.Store) ([]segment.Tag, []string, error) {
	if l, ok := st.(leafAllocLister); ok {
		rows, err := l.LeafAllocs(ctx)
		if err != nil {
			return nil, nil, err
		}
		tags := make([]segment.Tag, len(rows))
		names := make([]string, len(rows))
		for i, r := range rows {
			tags[i] = segment.Tag{Name: r.Tag, Max: max(r.MaxID-1, 0), Step: r.Step}
			names[i] = r.Tag
		}
		return tags, names, nil
	}
	tags, err := st.Tags(ctx)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, len(tags))
	for i, t := range tags {
		names[i] = t.Name
	}
	return tags, names, nil
}

// leafView is one row of /cache: Leaf's SegmentBufferView.
type leafView struct {
	initOK, nextReady bool
	pos               int64
	seg               [2][3]int64 // value, max, step of segments 0 and 1
}

// leafViewOf shows an allocator's state as Leaf's SegmentBuffer would hold it:
// the current range in the segment Leaf would be using after as many switches as
// flurry took ranges (Leaf loads its first segment into 0 and switches on every
// reload), value being the next ID and max one past the last.
func leafViewOf(st segment.Stats) leafView {
	v := leafView{initOK: true, nextReady: st.NextReady}
	cur := [3]int64{int64(st.CurrentFirst) + st.Issued, int64(st.CurrentLast) + 1, int64(st.CurrentLast-st.CurrentFirst) + 1}
	var other [3]int64
	if st.NextReady {
		other = [3]int64{int64(st.NextFirst), int64(st.NextLast) + 1, int64(st.NextLast-st.NextFirst) + 1}
	}
	switches := st.Fetches - 1
	if st.NextReady {
		switches--
	}
	if switches > 0 {
		v.pos = switches % 2
	}
	v.seg[v.pos], v.seg[1-v.pos] = cur, other
	return v
}

// cacheView lists the tags of Leaf's cache as Leaf's HashMap of views would
// iterate them, with the views; views of tags without an allocator are zero.
func (ts *tagSet) cacheView() ([]string, map[string]leafView) {
	ts.mu.Lock()
	keys := ts.cache.Keys()
	allocs := make(map[string]*tagAlloc, len(ts.allocs))
	for k, ta := range ts.allocs {
		allocs[k] = ta
	}
	ts.mu.Unlock()
	views := make(map[string]leafView, len(keys))
	for _, k := range keys {
		ta := allocs[k]
		if ta == nil {
			continue
		}
		ta.mu.Lock()
		a := ta.alloc
		ta.mu.Unlock()
		if a != nil {
			views[k] = leafViewOf(a.Stats())
		}
	}
	return keys, views
}

// leafPage writes the head of a Leaf monitor page and its table's header.
func leafPage(b *strings.Builder, columns ...string) {
	b.WriteString("<!DOCTYPE html PUBLIC \"-//W3C//DTD HTML 4.01 Transitional//EN\" \"http://www.w3.org/TR/html4/loose.dtd\">\n")
	b.WriteString("<html>\n<head>\n<meta http-equiv=\"Content-Type\" content=\"text/html; charset=UTF-8\">\n<title>Leaf</title>\n")
	b.WriteString("<link href=\"/css/bootstrap.min.css\" rel=\"stylesheet\">\n</head>\n<body>\n<table class=\"table table-hover\">\n<thead>\n<tr>\n")
	for _, c := range columns {
		b.WriteString("<th>" + c + "</th>\n")
	}
	b.WriteString("</tr>\n</thead>\n<tbody>\n")
}

func leafRow(b *strings.Builder, cells ...string) {
	b.WriteString("<tr>\n")
	for _, c := range cells {
		b.WriteString("<td>" + c + "</td>\n")
	}
	b.WriteString("</tr>\n")
}

const leafPageEnd = "</tbody>\n</table>\n</body>\n</html>\n"

// leafCache serves Leaf's /cache page (LeafMonitorController.getCache,
// segment.ftl): a row per tag of Leaf's table, then one per segment namespace
// the caller may see.
func (s *Server) leafCache(w http.ResponseWriter, r *http.Request) {
	if !s.leafMonitorAllowed(w, r) {
		return
	}
	// Leaf copies its ConcurrentHashMap cache into a new HashMap, which the
	// template iterates.
	data := javahash.NewHashMap(0)
	views := map[string]leafView{}
	if s.leafTags != nil {
		keys, vs := s.leafTags.cacheView()
		for _, k := range keys {
			data.Put(k)
		}
		views = vs
	}
	for _, ns := range s.order {
		if ns.alloc != nil && s.mayView(ns, header(r, "Authorization")) {
			st := ns.alloc.Stats()
			data.Put(st.Tag)
			views[st.Tag] = leafViewOf(st)
		}
	}
	loc := requestLocale(r)
	var b strings.Builder
	leafPage(&b, "name", "init", "next", "pos", "value0", "max0", "step0", "value1", "max1", "step1")
	// FreeMarker wraps the HashMap in a SimpleHash, which iterates a clone of it.
	for _, k := range data.Clone().Keys() {
		v := views[k]
		leafRow(&b, html.EscapeString(k), strconv.FormatBool(v.initOK), strconv.FormatBool(v.nextReady), loc.format(v.pos),
			loc.format(v.seg[0][0]), loc.format(v.seg[0][1]), loc.format(v.seg[0][2]),
			loc.format(v.seg[1][0]), loc.format(v.seg[1][1]), loc.format(v.seg[1][2]))
	}
	b.WriteString(leafPageEnd)
	w.Header()["Content-Type"] = s.compat.html
	w.Write([]byte(b.String()))
}

// leafDB serves Leaf's /db page (LeafMonitorController.getDb, db.ftl): the rows
// of Leaf's table, or, without one, the tags of the segment namespaces' first
// stores that the caller may see.
func (s *Server) leafDB(w http.ResponseWriter, r *http.Request) {
	if !s.leafMonitorAllowed(w, r) {
		return
	}
	var stores []segment.Store
	if s.leafTags != nil {
		stores = s.leafTags.stores
	} else {
		for _, ns := range s.order {
			if len(ns.segStores) > 0 && s.mayView(ns, header(r, "Authorization")) {
				stores = append(stores, ns.segStores[0])
			}
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	var rows []segment.LeafAlloc
	var err error
	if s.leafTags != nil {
		// Leaf reads its one database; flurry the first of its stores that answers.
		var errs []error
		for _, st := range stores {
			var got []segment.LeafAlloc
			if got, err = leafAllocs(ctx, st); err == nil {
				rows = got
				break
			}
			errs = append(errs, err)
		}
		err = errors.Join(errs...)
		if rows != nil {
			err = nil
		}
	} else {
		seen := map[string]bool{}
		for _, st := range stores {
			got, lerr := leafAllocs(ctx, st)
			if lerr != nil {
				err = lerr
				break
			}
			for _, row := range got {
				if !seen[row.Tag] {
					seen[row.Tag] = true
					rows = append(rows, row)
				}
			}
		}
	}
	if err != nil {
		s.log.Warn("leaf /db: listing the table failed", "err", err)
		s.springError(w, r, http.StatusInternalServerError, "org.springframework.jdbc.CannotGetJdbcConnectionException", "the database did not answer")
		return
	}
	loc := requestLocale(r)
	var b strings.Builder
	leafPage(&b, "tag", "max", "step", "update")
	for _, row := range rows {
		leafRow(&b, html.EscapeString(row.Tag), loc.format(row.MaxID), loc.format(row.Step), html.EscapeString(row.UpdateTime))
	}
	b.WriteString(leafPageEnd)
	w.Header()["Content-Type"] = s.compat.html
	w.Write([]byte(b.String()))
}

// leafAllocs lists st's rows as Leaf's getAllLeafAllocs reads them; a store
// without Leaf's columns gives its tags, max_id being the next value and
// update_time the tag's last change in the server's time zone.
func leafAllocs(ctx context.Context, st segment.Store) ([]segment.LeafAlloc, error) {
	if l, ok := st.(leafAllocLister); ok {
		return l.LeafAllocs(ctx)
	}
	tags, err := st.Tags(ctx)
	if err != nil {
		return nil, err
	}
	rows := make([]segment.LeafAlloc, len(tags))
	for i, t := range tags {
		rows[i] = segment.LeafAlloc{Tag: t.Name, MaxID: t.Max + 1, Step: t.Step}
		if !t.Updated.IsZero() {
			rows[i].UpdateTime = javaTimestamp(t.Updated.In(time.Local))
		}
	}
	return rows, nil
}

// javaTimestamp writes t as java.sql.Timestamp.toString does:
// "2019-09-06 09:35:00.0", the fraction without trailing zeros but one digit.
func javaTimestamp(t time.Time) string {
	frac := strings.TrimRight(fmt.Sprintf("%09d", t.Nanosecond()), "0")
	if frac == "" {
		frac = "0"
	}
	return t.Format("2006-01-02 15:04:05") + "." + frac
}

// leafCSS is the stylesheet Leaf's pages link: not Bootstrap, a few rules of
// flurry's own so that the table reads as a table.
const leafCSS = `body{margin:0;font-family:"Helvetica Neue",Helvetica,Arial,sans-serif;font-size:14px;line-height:1.43;color:#333;background:#fff}
table{border-collapse:collapse;border-spacing:0}
.table{width:100%;max-width:100%;margin-bottom:20px}
.table>thead>tr>th{text-align:left;vertical-align:bottom;border-bottom:2px solid #ddd}
.table>thead>tr>th,.table>tbody>tr>td{padding:8px;line-height:1.43;border-top:1px solid #ddd}
.table-hover>tbody>tr:hover{background-color:#f5f5f5}
`

// leafStylesheet serves /css/bootstrap.min.css.
func (s *Server) leafStylesheet(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css;charset=UTF-8")
	w.Header().Set("Cache-Control", "max-age=3600")
	w.Write([]byte(leafCSS))
}

// numLocale is how Java 8 writes a number for a locale with
// NumberFormat.getNumberInstance, which FreeMarker's default number format is:
// digits grouped by three with sep, digits from zero.
type numLocale struct {
	sep  string
	zero rune
}

// format writes v as FreeMarker's ${v} does in the locale.
func (l numLocale) format(v int64) string {
	d := strconv.FormatInt(v, 10)
	neg := strings.HasPrefix(d, "-")
	d = strings.TrimPrefix(d, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range d {
		if i > 0 && (len(d)-i)%3 == 0 {
			b.WriteString(l.sep)
		}
		b.WriteRune(l.zero + c - '0')
	}
	return b.String()
}

// Java 8's grouping separators (its own locale data, before CLDR became the
// default) for the languages and countries that do not use ",".
var (
	groupByLanguage = map[string]string{
		"ca": ".", "da": ".", "de": ".", "el": ".", "es": ".", "hr": ".", "id": ".", "in": ".", "is": ".", "it": ".",
		"mk": ".", "nl": ".", "pt": ".", "ro": ".", "sl": ".", "sq": ".", "sr": ".", "tr": ".", "vi": ".",
		"be": "\u00a0", "bg": "\u00a0", "cs": "\u00a0", "et": "\u00a0", "fi": "\u00a0", "fr": "\u00a0", "hu": "\u00a0",
		"lt": "\u00a0", "lv": "\u00a0", "nb": "\u00a0", "nn": "\u00a0", "no": "\u00a0", "pl": "\u00a0", "ru": "\u00a0",
		"sk": "\u00a0", "sv": "\u00a0", "uk": "\u00a0",
	}
	groupByCountry = map[string]string{
		"de-CH": "'", "fr-CH": "'", "it-CH": "'", "fr-BE": ".",
		"es-CR": ",", "es-DO": ",", "es-GT": ",", "es-HN": ",", "es-MX": ",", "es-NI": ",", "es-PA": ",",
		"es-PE": ",", "es-PR": ",", "es-SV": ",", "es-US": ",",
	}
)

// localeFor is the number format of a BCP 47 language tag as Java's
// Locale.forLanguageTag reads it; anything else is written as English.
func localeFor(tag string) numLocale {
	parts := strings.Split(tag, "-")
	lang := strings.ToLower(parts[0])
	country := ""
	for _, p := range parts[1:] {
		if len(p) == 2 && isLetters(p) {
			country = strings.ToUpper(p)
			break
		}
		if len(p) == 1 {
			break // an extension or private use: no country after it
		}
	}
	if lang == "hi" && country == "IN" {
		return numLocale{sep: ",", zero: '\u0966'} // Devanagari digits
	}
	if sep, ok := groupByCountry[lang+"-"+country]; ok {
		return numLocale{sep: sep, zero: '0'}
	}
	if sep, ok := groupByLanguage[lang]; ok {
		return numLocale{sep: sep, zero: '0'}
	}
	return numLocale{sep: ",", zero: '0'}
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// requestLocale is the locale Leaf renders a page in: the first language of
// the highest quality in Accept-Language, as Tomcat's Request.getLocale picks it
// (the wildcard and q=0 skipped), English without one.
func requestLocale(r *http.Request) numLocale {
	best, bestQ := "", 0.0
	for _, v := range r.Header.Values("Accept-Language") {
		for _, part := range strings.Split(v, ",") {
			tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			tag = strings.TrimSpace(tag)
			q := 1.0
			if p := strings.TrimSpace(params); p != "" {
				k, val, _ := strings.Cut(p, "=")
				if strings.TrimSpace(k) == "q" {
					f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
					if err != nil {
						continue
					}
					q = f
				}
			}
			if tag == "" || tag == "*" || q <= 0 {
				continue
			}
			if q > bestQ {
				best, bestQ = tag, q
			}
		}
	}
	return localeFor(best)
}
