package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/flurryid/flurry/api/flurryv1"
	"github.com/flurryid/flurry/server"
)

// The zero Options serve the default configuration: a snowflake namespace and a
// segment namespace on the embedded file stores in ./flurry-data.
func TestNewWithZeroOptions(t *testing.T) {
	t.Chdir(t.TempDir())
	s, err := server.New(context.Background(), server.Options{})
	if err != nil {
		t.Fatalf("server.New with zero Options: %v", err)
	}
	defer s.Close(context.Background())
	if got := strings.Join(s.Namespaces(), ","); got != "default,segment" {
		t.Fatalf("namespaces %q", got)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	for _, ns := range []string{"default", "segment"} {
		res, err := ts.Client().Get(ts.URL + "/v1/" + ns + "/next?count=3")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Errorf("%s: %d", ns, res.StatusCode)
		}
	}
}

// TestDefaultsSayTheirStoresArePrivate: on the embedded default, each namespace's
// info names its store identity as private, with a warning, and the snowflake
// namespace the fields its lease fills; two data directories give two identities.
func TestDefaultsSayTheirStoresArePrivate(t *testing.T) {
	info := func() *flurryv1.InfoResponse {
		t.Chdir(t.TempDir())
		s, err := server.New(context.Background(), server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(context.Background())
		ts := httptest.NewServer(s.Handler())
		defer ts.Close()
		res, err := ts.Client().Get(ts.URL + "/v1/info")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		var m flurryv1.InfoResponse
		if err := protojson.Unmarshal(body, &m); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		return &m
	}
	a, b := info(), info()
	if a.Instance == "" || a.Instance == b.Instance {
		t.Errorf("instances %q and %q", a.Instance, b.Instance)
	}
	for k, ns := range a.Namespaces {
		var id, other *flurryv1.StoreIdentity
		switch ns.Strategy {
		case "snowflake":
			id, other = ns.Lease.GetIdentity(), b.Namespaces[k].Lease.GetIdentity()
			if strings.Join(ns.Lease.GetLeased(), ",") != "worker" {
				t.Errorf("%s: leased %v, want worker", ns.Name, ns.Lease.GetLeased())
			}
		case "segment":
			if st := ns.Segment.GetStoreIdentities(); len(st) == 1 && st[0].Residue == 0 && st[0].Modulus == 1 {
				id, other = st[0].Identity, b.Namespaces[k].Segment.GetStoreIdentities()[0].Identity
			}
		}
		if !id.GetPrivate() || id.GetId() == "" || id.GetId() == other.GetId() {
			t.Errorf("%s: identity %v, the other data directory's %v; want private and different", ns.Name, id, other)
		}
		if len(ns.Warnings) != 1 || !strings.Contains(ns.Warnings[0], "only this server can use") {
			t.Errorf("%s: warnings %q", ns.Name, ns.Warnings)
		}
	}
}
