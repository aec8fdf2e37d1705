package server

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"html"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/compattest"
	"github.com/flurryid/flurry/verify/testenv"
)

// leafTemplates is the directory of Leaf's own templates, segment.ftl and db.ftl.
func leafTemplates(t *testing.T) string {
	t.Helper()
	return filepath.Join(testenv.CompatDir(t, "leaf/templates/segment.ftl"), "leaf", "templates")
}

// freeMarker renders Leaf's templates with FreeMarker as Leaf's server does, on
// Java 8's locale data (COMPAT).
type freeMarker struct {
	java, cp, templates string
}

func newFreeMarker(t *testing.T) *freeMarker {
	t.Helper()
	templates := leafTemplates(t)
	_, java := testenv.Java(t)
	jar := testenv.FreeMarkerJar(t)
	classes := testenv.CompileJava(t, jar, "testdata/leafpages/RenderLeaf.java")
	return &freeMarker{java: java, cp: classes + string(os.PathListSeparator) + jar, templates: templates}
}

func (f *freeMarker) render(t *testing.T, locale, mode, input string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, f.java, "-Djava.locale.providers=COMPAT", "-cp", f.cp, "RenderLeaf", f.templates, locale, mode)
	cmd.Stdin = strings.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("RenderLeaf %s %s: %v\n%s", locale, mode, err, stderr.String())
	}
	return string(out)
}

var (
	reRow  = regexp.MustCompile(`(?s)<tr>(.*?)</tr>`)
	reCell = regexp.MustCompile(`(?s)<t[hd]>(.*?)</t[hd]>`)
	reLink = regexp.MustCompile(`<link href="([^"]+)" rel="stylesheet">`)
)

// htmlTable reads a page's table: the header row, then each row's cells, as a
// browser shows them. Rows without cells (Leaf's template writes an empty one
// after each row) are left out.
func htmlTable(page string) [][]string {
	var out [][]string
	for _, m := range reRow.FindAllStringSubmatch(page, -1) {
		var cells []string
		for _, c := range reCell.FindAllStringSubmatch(m[1], -1) {
			cells = append(cells, strings.TrimSpace(html.UnescapeString(c[1])))
		}
		if len(cells) > 0 {
			out = append(out, cells)
		}
	}
	return out
}

func sameTable(t *testing.T, what, leaf, flurry string) {
	t.Helper()
	lt, ft := htmlTable(leaf), htmlTable(flurry)
	if len(lt) < 2 {
		t.Fatalf("%s: Leaf's page has no rows:\n%s", what, leaf)
	}
	if fmt.Sprint(lt) != fmt.Sprint(ft) {
		t.Fatalf("%s: the tables differ\nLeaf (FreeMarker):\n%s\nflurry:\n%s", what, showTable(lt), showTable(ft))
	}
	if reLink.FindString(leaf) != reLink.FindString(flurry) || !strings.Contains(flurry, `<table class="table table-hover">`) {
		t.Fatalf("%s: flurry's page links %q in a table of another class; Leaf's %q", what, reLink.FindString(flurry), reLink.FindString(leaf))
	}
}

func showTable(rows [][]string) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString("  " + strings.Join(r, " | ") + "\n")
	}
	return b.String()
}

// leafRows are the test's rows of leaf_alloc beside Leaf's sample row: with the
// tag added later, twelve, so that Leaf's ConcurrentHashMap grows to 32 slots
// while the HashMap the controller copies it into keeps 16; names whose hashes
// share bins; steps and values that FreeMarker groups.
var leafRows = []struct {
	tag        string
	maxID      int64
	step       int64
	updateTime string // "" for the column's default
}{
	{"a", 1, 2000, "2019-09-06 09:35:00"},
	{"b", 1000000, 1000, ""},
	{"Aa", 5, 100, "2020-02-29 23:59:59"},
	{"BB", 7, 100, ""}, // "Aa" and "BB" have one String.hashCode
	{"order", 123456789, 1000000, ""},
	{"user.id", 1, 500, ""},
	{"cart", 1, 100, ""}, {"pay", 1, 100, ""}, {"sku", 1, 100, ""}, {"coupon", 1, 100, ""}, // "sku" is 16 slots above "cart"
}

// TestLeafPagesMatchFreeMarker renders Leaf's own templates (segment.ftl,
// db.ftl) with FreeMarker from the data model Leaf's LeafMonitorController builds
// for the same leaf_alloc rows and the same requests, and compares the tables
// with flurry's /cache and /db, cell by cell and row by row, in several locales;
// and numbers in every locale.
func TestLeafPagesMatchFreeMarker(t *testing.T) {
	fm := newFreeMarker(t)
	t.Run("locales", func(t *testing.T) { numberLocales(t, fm) })
	testenv.NeedScheme(t, "mysql")
	for _, e := range []compattest.Engine{"mysql", "postgres"} {
		t.Run(string(e), func(t *testing.T) {
			svc := testenv.MySQL
			if e == "postgres" {
				svc = testenv.Postgres
			}
			u, db := testenv.ScratchDB(t, svc)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := compattest.Exec(ctx, db, compattest.LeafDDL(e)); err != nil {
				t.Fatal(err)
			}
			for _, r := range leafRows {
				q := "INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ('%s', %d, %d, 'test')"
				if r.updateTime != "" {
					q = "INSERT INTO leaf_alloc (biz_tag, max_id, step, description, update_time) VALUES ('%s', %d, %d, 'test', '" + r.updateTime + "')"
				}
				if _, err := db.ExecContext(ctx, fmt.Sprintf(q, r.tag, r.maxID, r.step)); err != nil {
					t.Fatal(err)
				}
			}
			first := dbTags(ctx, t, db)
			sep := "?"
			if strings.Contains(u, "?") {
				sep = "&"
			}
			_, hs := newServer(t, "leaf:\n  segment:\n    stores: ['"+u+sep+"table=leaf_alloc&schema=leaf']\n  reload: 50ms\n", nil)

			// A tag added while running joins Leaf's cache at the next reload.
			if _, err := db.ExecContext(ctx, "INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ('added', 40, 100, 'test')"); err != nil {
				t.Fatal(err)
			}
			waitFor(t, func() bool { code, _ := tinyGet(t, hs.URL, "/api/segment/get/added"); return code == 200 })
			second := dbTags(ctx, t, db)

			// Requests: Leaf loads a tag's first segment, max_id-step .. max_id-1
			// after its UPDATE, on the tag's first request, and serves on from it.
			asked := map[string]int{"a": 3, "order": 1, "Aa": 2, "added": 1}
			for tag, n := range asked {
				for i := 0; i < n; i++ {
					if tag == "added" {
						continue // asked once above
					}
					if code, body := tinyGet(t, hs.URL, "/api/segment/get/"+tag); code != 200 {
						t.Fatalf("%s: %d %q", tag, code, body)
					}
				}
			}
			var cacheIn strings.Builder
			cacheIn.WriteString("load\t" + strings.Join(first, "\t") + "\n")
			cacheIn.WriteString("load\t" + strings.Join(second, "\t") + "\n")
			for tag, n := range asked {
				maxID, step := int64(40), int64(100)
				for _, r := range leafRows {
					if r.tag == tag {
						maxID, step = r.maxID, r.step
					}
				}
				// SegmentBufferView: init, next, pos, value0, max0, step0, value1, max1, step1.
				fmt.Fprintf(&cacheIn, "view\t%s\ttrue\tfalse\t0\t%d\t%d\t%d\t0\t0\t0\n", tag, maxID+int64(n), maxID+step, step)
			}

			for _, lang := range []string{"", "fr-FR,fr;q=0.9,en;q=0.8", "es-MX;q=0.5, pt-BR"} {
				locale := "en-US"
				if lang != "" {
					locale = strings.TrimSpace(strings.Split(strings.Split(lang, ",")[0], ";")[0])
					if lang == "es-MX;q=0.5, pt-BR" {
						locale = "pt-BR"
					}
				}
				page := fetchPage(t, hs.URL+"/cache", lang)
				sameTable(t, "/cache in "+locale, fm.render(t, locale, "cache", cacheIn.String()), page)

				page = fetchPage(t, hs.URL+"/db", lang)
				sameTable(t, "/db in "+locale, fm.render(t, locale, "db", dbRowsAsLeaf(ctx, t, db, e)), page)
			}
			if code, body := tinyGet(t, hs.URL, "/css/bootstrap.min.css"); code != 200 || !strings.Contains(body, ".table") {
				t.Fatalf("/css/bootstrap.min.css: %d %q", code, body)
			}
		})
	}
}

// dbTags is SegmentIDGenImpl's dao.getAllTags: SELECT biz_tag FROM leaf_alloc,
// in the order the database gives.
func dbTags(ctx context.Context, t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.QueryContext(ctx, "SELECT biz_tag FROM leaf_alloc")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// dbRowsAsLeaf is IDAllocMapper.getAllLeafAllocs through MySQL Connector/J:
// update_time's text in the session's time zone, as java.sql.Timestamp.toString
// writes it (a fraction of at least one digit).
func dbRowsAsLeaf(ctx context.Context, t *testing.T, db *sql.DB, e compattest.Engine) string {
	t.Helper()
	q := "SELECT biz_tag, max_id, step, CAST(update_time AS CHAR) FROM leaf_alloc"
	if e == "postgres" {
		q = "SELECT biz_tag, max_id, step, CAST(update_time AS TEXT) FROM leaf_alloc"
	}
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var tag, upd string
		var maxID, step int64
		if err := rows.Scan(&tag, &maxID, &step, &upd); err != nil {
			t.Fatal(err)
		}
		if whole, frac, ok := strings.Cut(upd, "."); ok {
			if frac = strings.TrimRight(frac, "0"); frac == "" {
				frac = "0"
			}
			upd = whole + "." + frac
		} else {
			upd += ".0"
		}
		fmt.Fprintf(&b, "row\t%s\t%d\t%d\t%s\n", tag, maxID, step, upd)
	}
	return b.String()
}

func fetchPage(t *testing.T, url, lang string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if lang != "" {
		req.Header.Set("Accept-Language", lang)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/html;charset=UTF-8" {
		t.Fatalf("%s: %d %q %q", url, res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	return string(b)
}

// numberLocales: flurry groups digits as FreeMarker does on Java 8 in every
// locale Java knows (a number system chosen by a -u- extension aside).
func numberLocales(t *testing.T, fm *freeMarker) {
	out := fm.render(t, "-", "locales", "")
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		tag, want, _ := strings.Cut(line, "\t")
		if strings.Contains(tag, "-u-") || strings.Contains(tag, "-x-") {
			continue
		}
		if got := localeFor(tag).format(1234567); got != want {
			t.Errorf("%s: flurry writes %q, FreeMarker %q", tag, got, want)
		}
		n++
	}
	if n < 100 {
		t.Fatalf("only %d locales compared", n)
	}
}
