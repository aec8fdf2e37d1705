package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/compattest"
	"github.com/flurryid/flurry/verify/testenv"
)

// The expectations below come from the originals' source (facts, not code):
//
//	[LeafController]  Meituan-Dianping/Leaf leaf-server/.../controller/LeafController.java:
//	                  an ID is returned as a String (text/plain;charset=UTF-8 in Spring
//	                  Boot 1.5); an EXCEPTION Result throws LeafServerException(result.toString()).
//	[LeafServerEx]    leaf-server/.../exception/LeafServerException.java: @ResponseStatus(500).
//	[LeafPom]         leaf-server/pom.xml: spring-boot 1.5.18, whose DefaultErrorAttributes
//	                  write timestamp (epoch ms), status, error, exception, message, path.
//	[SegmentIDGen]    leaf-core/.../segment/SegmentIDGenImpl.java: -2 key not in the cache,
//	                  -3 both segments not ready; the tag list is reloaded every 60 s;
//	                  a segment is max_id-step .. max_id-1.
//	[Monitor]         leaf-server/.../controller/LeafMonitorController.java: /cache, /db
//	                  (HTML templates), decodeSnowflakeId's arithmetic and errorMsg.
//	[LeafREADME]      Leaf README.md: leaf_alloc's DDL and the row leaf-segment-test
//	                  (max_id 1, step 2000).
//	[IdContronller]   didi/tinyid tinyid-server/.../controller/IdContronller.java: the four
//	                  routes, checkBatchSize, "" on errors for the Simple forms.
//	[ErrorCode]       tinyid-server/.../vo/ErrorCode.java: TOKEN_ERR 5 "token is error", SYS_ERR 6.
//	[Response]        tinyid-server/.../vo/Response.java: data, code (200), message ("").
//	[SegmentId]       tinyid-base/.../entity/SegmentId.java: fields maxId, loadingId,
//	                  currentId, delta, remainder; IDs in (currentId, maxId], id%delta==remainder.
//	[DbSegment]       tinyid-server/.../service/impl/DbSegmentIdServiceImpl.java: max_id +=
//	                  step; currentId = old max_id; loadingId = currentId + step*20/100.
//	[TokenService]    tinyid-server/.../service/impl/TinyIdTokenServiceImpl.java: token ->
//	                  biz types from tiny_id_token, refreshed every minute.
//	[dbsql]           tinyid-server/db.sql: the tables and rows (test: max_id 1, step
//	                  100000; test_odd: delta 2, remainder 1; one token for both).
//	[appprops]        tinyid-server/.../offline/application.properties: context path /tinyid.

func compatEngine(t *testing.T, e compattest.Engine, ddl func(compattest.Engine) []string, keys string) (string, *sql.DB) {
	t.Helper()
	svc := testenv.MySQL
	if e == "postgres" {
		svc = testenv.Postgres
	}
	u, db := testenv.ScratchDB(t, svc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := compattest.Exec(ctx, db, ddl(e)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(u, "?") {
		u += "&" + keys
	} else {
		u += "?" + keys
	}
	return u, db
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "flurry.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// springBody checks Spring Boot 1.5's error body [LeafPom]: its keys in order and
// their values.
func springBody(t *testing.T, body string, status int, exception, message, path string) {
	t.Helper()
	re := regexp.MustCompile(`^\{"timestamp":(\d{13}),"status":(\d+),"error":"([^"]*)",("exception":"([^"]*)",)?"message":(".*"),"path":(".*")\}\n?$`)
	m := re.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("not Spring Boot 1.5's error body: %q", body)
	}
	var msg, p string
	json.Unmarshal([]byte(m[6]), &msg)
	json.Unmarshal([]byte(m[7]), &p)
	if m[2] != strconv.Itoa(status) || m[3] != http.StatusText(status) || m[5] != exception || msg != message || p != path {
		t.Fatalf("error body %q, want status %d, exception %q, message %q, path %q", body, status, exception, message, path)
	}
}

// leafIDs asks the Leaf segment route n times.
func leafIDs(t *testing.T, c *http.Client, base, tag string, n int) []int64 {
	t.Helper()
	var out []int64
	for i := 0; i < n; i++ {
		code, h, body := fetch(t, c, "GET", base+"/api/segment/get/"+tag)
		if code != 200 || h.Get("Content-Type") != "text/plain;charset=UTF-8" {
			t.Fatalf("segment %s: %d %q %q", tag, code, h.Get("Content-Type"), body)
		}
		id, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	return out
}

// TestServeLeafCompat runs flurry serve in the Leaf table mode on Leaf's own table
// in MariaDB and PostgreSQL, with only Leaf's privileges' statements
// (schema=leaf), and compares each route with Leaf's, then runs it beside Leaf's
// own SQL, across a graceful restart.
func TestServeLeafCompat(t *testing.T) {
	testenv.NeedScheme(t, "mysql")
	bin := buildServe(t)
	c := &http.Client{Timeout: 30 * time.Second}
	for _, e := range []compattest.Engine{"mysql", "postgres"} {
		t.Run(string(e), func(t *testing.T) {
			u, db := compatEngine(t, e, compattest.LeafDDL, "table=leaf_alloc&schema=leaf")
			cfg := writeConfig(t, fmt.Sprintf(`leaf:
  segment:
    stores: [%q]
  reload: 1s
namespaces:
  default:
    strategy: snowflake
    snowflake:
      # Leaf's 41/10/12 bits from Twitter's epoch; the worker field's top bit is
      # fixed to 1, so the leased values are 512..1023, clear of Leaf servers whose
      # ZooKeeper sequence numbers stay below 512.
      layout: "time:41:1ms:2010-11-04T01:42:54.657Z,reserved:1,worker:9,seq:12"
      node: reserved=1
`, u))
			data := t.TempDir()
			p := startServe(t, bin, c, "http", nil, "--config", cfg, "--data", data)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()

			// [LeafREADME] max_id 1: Leaf's first segment is 1..2000 [SegmentIDGen].
			if ids := leafIDs(t, c, p.base, "leaf-segment-test", 2); ids[0] != 1 || ids[1] != 2 {
				t.Fatalf("first IDs %v, want [1 2]", ids)
			}
			// A trailing slash matches, as in Spring MVC.
			if ids := leafIDs(t, c, p.base, "leaf-segment-test/", 1); ids[0] != 3 {
				t.Fatalf("trailing slash: %v", ids)
			}
			// -2: the key is not in the table [SegmentIDGen] [LeafController] [LeafServerEx].
			code, h, body := fetch(t, c, "GET", p.base+"/api/segment/get/nope")
			if code != 500 || h.Get("Content-Type") != "application/json;charset=UTF-8" {
				t.Fatalf("-2: %d %q %q", code, h.Get("Content-Type"), body)
			}
			springBody(t, body, 500, "com.sankuai.inf.leaf.server.exception.LeafServerException", "Result{id=-2, status=EXCEPTION}", "/api/segment/get/nope")
			if strings.Contains(body, "127.0.0.1") {
				t.Fatalf("the error body names the database: %q", body)
			}

			// A tag added while running is served after the next reload [SegmentIDGen].
			for _, tag := range []string{"added-1", "added-2"} {
				if _, err := db.ExecContext(ctx, "INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ('"+tag+"', 5000, 100, 'added')"); err != nil {
					t.Fatal(err)
				}
			}
			deadline := time.Now().Add(20 * time.Second)
			for {
				code, _, body = fetch(t, c, "GET", p.base+"/api/segment/get/added-1")
				if code == 200 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("added tag never served: %d %q", code, body)
				}
				time.Sleep(200 * time.Millisecond)
			}
			if body != "5000" {
				t.Fatalf("added-1's first ID %q, want 5000 (its max_id)", body)
			}

			// -3: the table does not answer and no buffer is loaded [SegmentIDGen].
			rename := map[compattest.Engine][2]string{
				"mysql":    {"RENAME TABLE leaf_alloc TO leaf_alloc_away", "RENAME TABLE leaf_alloc_away TO leaf_alloc"},
				"postgres": {"ALTER TABLE leaf_alloc RENAME TO leaf_alloc_away", "ALTER TABLE leaf_alloc_away RENAME TO leaf_alloc"},
			}[e]
			if _, err := db.ExecContext(ctx, rename[0]); err != nil {
				t.Fatal(err)
			}
			code, h, body = fetch(t, c, "GET", p.base+"/api/segment/get/added-2")
			if _, err := db.ExecContext(ctx, rename[1]); err != nil {
				t.Fatal(err)
			}
			if code != 500 || h.Get("Content-Type") != "application/json;charset=UTF-8" {
				t.Fatalf("-3: %d %q", code, body)
			}
			springBody(t, body, 500, "com.sankuai.inf.leaf.server.exception.LeafServerException", "Result{id=-3, status=EXCEPTION}", "/api/segment/get/added-2")
			// ... and serves again once it answers.
			if ids := leafIDs(t, c, p.base, "added-2", 1); ids[0] != 5000 {
				t.Fatalf("added-2 after the outage: %v", ids)
			}

			// The snowflake route, and decodeSnowflakeId in Leaf's key order [Monitor].
			code, h, body = fetch(t, c, "GET", p.base+"/api/snowflake/get/anything/")
			if code != 200 || h.Get("Content-Type") != "text/plain;charset=UTF-8" {
				t.Fatalf("snowflake: %d %q", code, body)
			}
			code, h, dec := fetch(t, c, "GET", p.base+"/decodeSnowflakeId?snowflakeId="+body)
			m := regexp.MustCompile(`^\{"workerId":"(\d+)","sequenceId":"(\d+)","timestamp":"(\d+)\(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\)"\}$`).FindStringSubmatch(dec)
			if code != 200 || h.Get("Content-Type") != "application/json;charset=UTF-8" || m == nil {
				t.Fatalf("decode: %d %q %q", code, h.Get("Content-Type"), dec)
			}
			id, _ := strconv.ParseInt(body, 10, 64)
			if w, _ := strconv.Atoi(m[1]); w < 512 || w > 1023 || int64(w) != (id>>12)&1023 {
				t.Fatalf("workerId %s of %d: want Leaf's bits 12..21, in the reserved 512..1023", m[1], id)
			}
			// Leaf decodes any long: -1 gives Twitter's epoch - 1, worker 1023, sequence 4095.
			_, _, dec = fetch(t, c, "GET", p.base+"/decodeSnowflakeId?snowflakeId=-1")
			if !strings.HasPrefix(dec, `{"workerId":"1023","sequenceId":"4095","timestamp":"1288834974656(`) {
				t.Fatalf("decode -1: %q", dec)
			}
			_, _, dec = fetch(t, c, "GET", p.base+"/decodeSnowflakeId?snowflakeId=5")
			if !strings.HasPrefix(dec, `{"workerId":"0","sequenceId":"5","timestamp":"1288834974657(`) {
				t.Fatalf("decode 5: %q", dec)
			}
			code, _, dec = fetch(t, c, "GET", p.base+"/decodeSnowflakeId?snowflakeId=abc")
			if code != 200 || dec != `{"errorMsg":"snowflake Id反解析发生异常!"}` {
				t.Fatalf("decode abc: %d %q", code, dec)
			}
			code, _, dec = fetch(t, c, "GET", p.base+"/decodeSnowflakeId")
			if code != 400 {
				t.Fatalf("decode without the parameter: %d %q", code, dec)
			}
			springBody(t, dec, 400, "org.springframework.web.bind.MissingServletRequestParameterException", "Required String parameter 'snowflakeId' is not present", "/decodeSnowflakeId")

			// The monitor pages [Monitor].
			for _, route := range []string{"/cache", "/db", "/cache/", "/db/"} {
				code, h, body = fetch(t, c, "GET", p.base+route)
				if code != 200 || h.Get("Content-Type") != "text/html;charset=UTF-8" || !strings.Contains(body, "<td>leaf-segment-test</td>") {
					t.Fatalf("%s: %d %q %q", route, code, h.Get("Content-Type"), body)
				}
			}

			// Beside Leaf on the same row, both ways, across a graceful restart.
			var mu sync.Mutex
			var leafRanges [][2]int64
			var flurryIDs []int64
			for round := 0; round < 2; round++ {
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 20; i++ {
						lo, hi, err := compattest.LeafTake(ctx, db, e, "leaf-segment-test", int64(i%2)*4000)
						if err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						leafRanges = append(leafRanges, [2]int64{lo, hi})
						mu.Unlock()
					}
				}()
				ids := leafIDs(t, c, p.base, "leaf-segment-test", 300)
				wg.Wait()
				flurryIDs = append(flurryIDs, ids...)
				if err := p.stop(t, syscall.SIGTERM); err != nil {
					t.Fatalf("graceful stop: %v\n%s", err, p.log())
				}
				p = startServe(t, bin, c, "http", nil, "--config", cfg, "--data", data)
			}
			flurryIDs = append(flurryIDs, leafIDs(t, c, p.base, "leaf-segment-test", 50)...)
			checkBeside(t, flurryIDs, leafRanges)
		})
	}
}

// checkBeside fails when flurry issued an ID twice or one inside a range the
// original took.
func checkBeside(t *testing.T, ids []int64, ranges [][2]int64) {
	t.Helper()
	seen := map[int64]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("flurry issued %d twice", id)
		}
		seen[id] = true
	}
	sort.Slice(ranges, func(i, j int) bool { return ranges[i][0] < ranges[j][0] })
	for _, id := range ids {
		i := sort.Search(len(ranges), func(i int) bool { return ranges[i][1] >= id })
		if i < len(ranges) && ranges[i][0] <= id {
			t.Fatalf("flurry issued %d, inside the original's range %d..%d", id, ranges[i][0], ranges[i][1])
		}
	}
	if len(ranges) == 0 || len(ids) == 0 {
		t.Fatal("nothing ran beside")
	}
}

const tinyToken = "0f673adf80504e2eaa552f5d791b644c" // [dbsql]

// tinyResp is tinyid's Response [Response].
type tinyResp struct {
	Data    json.RawMessage `json:"data"`
	Code    int             `json:"code"`
	Message string          `json:"message"`
}

func tinyCall(t *testing.T, c *http.Client, method, url string) (tinyResp, string) {
	t.Helper()
	code, h, body := fetch(t, c, method, url)
	var r tinyResp
	if code != 200 || h.Get("Content-Type") != "application/json;charset=UTF-8" || json.Unmarshal([]byte(body), &r) != nil {
		t.Fatalf("%s %s: %d %q %q", method, url, code, h.Get("Content-Type"), body)
	}
	if !regexp.MustCompile(`^\{"data":.*,"code":\d+,"message":".*"\}$`).MatchString(body) {
		t.Fatalf("%s: keys not in Response's order: %q", url, body)
	}
	return r, body
}

// TestServeTinyIDCompat runs flurry serve in the tinyid mode on db.sql's tables in
// MariaDB and PostgreSQL, compares every route with tinyid's, then runs it beside
// tinyid's own SQL across a graceful restart.
func TestServeTinyIDCompat(t *testing.T) {
	testenv.NeedScheme(t, "mysql")
	bin := buildServe(t)
	c := &http.Client{Timeout: 30 * time.Second}
	for _, e := range []compattest.Engine{"mysql", "postgres"} {
		t.Run(string(e), func(t *testing.T) {
			u, db := compatEngine(t, e, compattest.TinyIDDDL, "table=tiny_id_info")
			cfg := writeConfig(t, fmt.Sprintf("tinyid:\n  stores: [%q]\n  reload: 1s\n  batch_size_max: 1000\n", u))
			data := t.TempDir()
			p := startServe(t, bin, c, "http", nil, "--config", cfg, "--data", data)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			id := func(biz string) string {
				return p.base + "/tinyid/id/%s?bizType=" + biz + "&token=" + tinyToken
			}

			// nextId: the Java client POSTs with the query [IdContronller]; test's
			// max_id is 1, so the first ID is 2 [dbsql] [SegmentId].
			r, body := tinyCall(t, c, "POST", fmt.Sprintf(id("test"), "nextId"))
			if body != `{"data":[2],"code":200,"message":""}` {
				t.Fatalf("nextId: %q", body)
			}
			r, body = tinyCall(t, c, "GET", fmt.Sprintf(id("test"), "nextId/")+"&batchSize=3")
			if body != `{"data":[3,4,5],"code":200,"message":""}` {
				t.Fatalf("nextId batchSize=3: %q", body)
			}
			// batchSize is capped at batch.size.max [IdContronller].
			r, _ = tinyCall(t, c, "GET", fmt.Sprintf(id("test"), "nextId")+"&batchSize=5000")
			var many []int64
			if json.Unmarshal(r.Data, &many) != nil || len(many) != 1000 || many[0] != 6 {
				t.Fatalf("capped batch: %d IDs from %v", len(many), many[:min(3, len(many))])
			}
			// test_odd: delta 2, remainder 1 [dbsql] [SegmentId].
			_, body = tinyCall(t, c, "GET", fmt.Sprintf(id("test_odd"), "nextId")+"&batchSize=3")
			if body != `{"data":[3,5,7],"code":200,"message":""}` {
				t.Fatalf("test_odd: %q", body)
			}
			// A bad token: code 5 [ErrorCode], HTTP 200.
			_, body = tinyCall(t, c, "GET", p.base+"/tinyid/id/nextId?bizType=test&token=wrong")
			if body != `{"data":null,"code":5,"message":"token is error"}` {
				t.Fatalf("bad token: %q", body)
			}
			_, body = tinyCall(t, c, "GET", p.base+"/tinyid/id/nextSegmentId?bizType=test")
			if body != `{"data":null,"code":5,"message":"token is error"}` {
				t.Fatalf("no token: %q", body)
			}
			// The Simple forms: text, "" on every error [IdContronller].
			for _, tc := range []struct{ url, want string }{
				{fmt.Sprintf(id("test"), "nextIdSimple"), "1006"},
				{fmt.Sprintf(id("test"), "nextIdSimple") + "&batchSize=2", "1007,1008"},
				{fmt.Sprintf(id("test"), "nextIdSimple") + "&batchSize=0", ""},
				{p.base + "/tinyid/id/nextIdSimple?bizType=test&token=wrong", ""},
				{p.base + "/tinyid/id/nextSegmentIdSimple?bizType=test&token=wrong", ""},
			} {
				code, h, body := fetch(t, c, "POST", tc.url)
				if code != 200 || h.Get("Content-Type") != "text/plain;charset=UTF-8" || body != tc.want {
					t.Fatalf("%s: %d %q %q, want %q", tc.url, code, h.Get("Content-Type"), body, tc.want)
				}
			}
			// nextSegmentId: tinyid's own range [DbSegment], SegmentId's fields in order.
			_, body = tinyCall(t, c, "GET", fmt.Sprintf(id("test"), "nextSegmentId"))
			m := regexp.MustCompile(`^\{"data":\{"maxId":(\d+),"loadingId":(\d+),"currentId":(\d+),"delta":1,"remainder":0\},"code":200,"message":""\}$`).FindStringSubmatch(body)
			if m == nil {
				t.Fatalf("nextSegmentId: %q", body)
			}
			maxID, _ := strconv.ParseInt(m[1], 10, 64)
			loading, _ := strconv.ParseInt(m[2], 10, 64)
			cur, _ := strconv.ParseInt(m[3], 10, 64)
			if maxID != cur+100000 || loading != cur+20000 || cur < 1008 {
				t.Fatalf("nextSegmentId: current %d loading %d max %d", cur, loading, maxID)
			}
			code, _, body := fetch(t, c, "GET", fmt.Sprintf(id("test_odd"), "nextSegmentIdSimple"))
			if f := strings.Split(body, ","); code != 200 || len(f) != 5 || f[3] != "2" || f[4] != "1" {
				t.Fatalf("nextSegmentIdSimple: %d %q", code, body)
			}
			// A token for a biz type tiny_id_info lacks: code 6 once the token is
			// reloaded [TokenService] [ErrorCode].
			if _, err := db.ExecContext(ctx, "INSERT INTO tiny_id_token (token, biz_type, remark) VALUES ('"+tinyToken+"', 'nope', 'x')"); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(20 * time.Second)
			for {
				r, body = tinyCall(t, c, "GET", fmt.Sprintf(id("nope"), "nextId"))
				if r.Code == 6 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("new token never read: %q", body)
				}
				time.Sleep(200 * time.Millisecond)
			}
			if body != `{"data":null,"code":6,"message":"error query segmentId: can not find biztype:nope"}` {
				t.Fatalf("unknown biz type: %q", body)
			}
			_, body = tinyCall(t, c, "GET", fmt.Sprintf(id("nope"), "nextSegmentId"))
			if body != `{"data":null,"code":6,"message":"can not find biztype:nope"}` {
				t.Fatalf("unknown biz type, nextSegmentId: %q", body)
			}
			// batchSize that is no Integer: Spring's 400.
			code, _, body = fetch(t, c, "GET", fmt.Sprintf(id("test"), "nextId")+"&batchSize=abc")
			if code != 400 || !strings.Contains(body, `"exception":"org.springframework.web.method.annotation.MethodArgumentTypeMismatchException"`) {
				t.Fatalf("batchSize=abc: %d %q", code, body)
			}

			// Beside tinyid on the same rows, both ways, across a graceful restart.
			for _, biz := range []string{"test", "test_odd"} {
				var mu sync.Mutex
				var ranges [][2]int64
				var ids []int64
				for round := 0; round < 2; round++ {
					var wg sync.WaitGroup
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; i < 10; i++ {
							seg, err := compattest.TinyTake(ctx, db, e, biz)
							if err != nil {
								t.Error(err)
								return
							}
							mu.Lock()
							ranges = append(ranges, [2]int64{seg.Current + 1, seg.Max})
							mu.Unlock()
						}
					}()
					for i := 0; i < 20; i++ {
						r, _ := tinyCall(t, c, "GET", fmt.Sprintf(id(biz), "nextId")+"&batchSize=1000")
						var got []int64
						if r.Code != 200 || json.Unmarshal(r.Data, &got) != nil {
							t.Fatalf("beside: %+v", r)
						}
						ids = append(ids, got...)
					}
					wg.Wait()
					if err := p.stop(t, syscall.SIGTERM); err != nil {
						t.Fatalf("graceful stop: %v\n%s", err, p.log())
					}
					p = startServe(t, bin, c, "http", nil, "--config", cfg, "--data", data)
				}
				for _, v := range ids {
					if biz == "test_odd" && v%2 != 1 {
						t.Fatalf("test_odd issued %d", v)
					}
				}
				checkBeside(t, ids, ranges)
			}
		})
	}
}
