package server_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

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
