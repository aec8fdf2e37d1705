package region_test

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leaseurl"
	"github.com/flurryid/flurry/lease/region"
	_ "github.com/flurryid/flurry/verify/enginetags"
	"github.com/flurryid/flurry/verify/testenv"
)

// TestRegistryEngines: the registry on the engines a global registry runs on
// (PostgreSQL, Redis, etcd): a value claimed once, the region's own claim
// confirmed, a second claimant refused naming both. Each run keeps its claims
// in a schema or under a prefix of its own, removed at the end.
func TestRegistryEngines(t *testing.T) {
	run := fmt.Sprintf("flurry-test-regions-%d", time.Now().UnixNano())
	for _, c := range []struct {
		scheme string
		url    func(t *testing.T) string
	}{
		{"postgres", func(t *testing.T) string {
			u, _ := testenv.ScratchDB(t, testenv.Postgres)
			return u
		}},
		{"redis", func(t *testing.T) string {
			u := testenv.Redis.URL(t)
			t.Cleanup(func() {
				out, err := exec.Command("sh", "-c", "redis-cli -u '"+u+"' --scan --pattern '*"+run+"*' | xargs -r redis-cli -u '"+u+"' del").CombinedOutput()
				if err != nil {
					t.Logf("removing the keys *%s*: %v %s", run, err, out)
				}
			})
			sep := "?"
			if strings.Contains(u, "?") {
				sep = "&"
			}
			return u + sep + "prefix=" + run
		}},
		{"etcd", func(t *testing.T) string {
			u := testenv.Etcd.URL(t)
			t.Cleanup(func() {
				out, err := exec.Command("etcdctl", "--endpoints", strings.TrimPrefix(u, "etcd://"), "del", "--prefix", run).CombinedOutput()
				if err != nil {
					t.Logf("removing the keys under %s: %v %s", run, err, out)
				}
			})
			return u + "/" + run
		}},
	} {
		t.Run(c.scheme, func(t *testing.T) {
			testenv.NeedScheme(t, c.scheme)
			u := c.url(t)
			reg, err := leaseurl.Open(ctx(t), u)
			if err != nil {
				t.Fatal(err)
			}
			defer reg.Close()
			o := func(name string, value int64, store string) region.Options {
				return region.Options{Registry: reg, RegistryName: lease.RedactURL(u), Name: name, Value: value, Field: "datacenter", Store: store}
			}
			first, err := region.Claim(ctx(t), o("eu-west", 1, "etcd:eu"))
			if err != nil {
				t.Fatal(err)
			}
			again, err := region.Claim(ctx(t), o("eu-west", 1, "etcd:eu"))
			if err != nil || !again.Claimed.Equal(first.Claimed) {
				t.Fatalf("the region's own claim: %+v, %v", again, err)
			}
			_, err = region.Claim(ctx(t), o("us-east", 1, "etcd:us"))
			if ce, ok := errors.AsType[*region.ConflictError](err); !ok || ce.Theirs.Name != "eu-west" || ce.Ours.Name != "us-east" {
				t.Fatalf("a second claimant: %v", err)
			}
			if _, err := region.Claim(ctx(t), o("us-east", 2, "etcd:us")); err != nil {
				t.Fatal(err)
			}
		})
	}
}
