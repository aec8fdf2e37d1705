package buildtags

import (
	"slices"
	"strings"
	"testing"

	"github.com/flurryid/flurry/internal/engines"
)

// compiled lists the families whose build constraints held when this test binary
// was compiled (the tagged *_test.go files add them), which the build information
// must agree with.
var compiled []string

func TestTagsMatchBuild(t *testing.T) {
	for _, f := range engines.Families() {
		if got, want := Built(f), slices.Contains(compiled, f.Name); got != want {
			t.Errorf("Built(%s) = %v, but the test binary was compiled with its tag: %v (tags %q)", f.Name, got, want, Tags())
		}
	}
	if Full() != (len(compiled) == len(engines.Families())) {
		t.Errorf("Full() = %v with the families %q compiled in", Full(), compiled)
	}
	if tags := Tags(); Full() && tags != "flurry_full" || len(compiled) == 0 && tags != "" {
		t.Errorf("Tags() = %q with the families %q compiled in", tags, compiled)
	}
}

func TestCheckScheme(t *testing.T) {
	for _, scheme := range []string{"file", "nope"} {
		if err := CheckScheme(scheme); err != nil {
			t.Errorf("CheckScheme(%s) = %v", scheme, err)
		}
	}
	for _, tc := range []struct{ scheme, tag string }{
		{"postgres", "flurry_sql"},
		{"SQLite", "flurry_sql"},
		{"rediss+sentinel", "flurry_redis"},
		{"etcd", "flurry_etcd"},
		{"zk", "flurry_zk"},
	} {
		built := Full() || strings.Contains(Tags(), tc.tag)
		err := CheckScheme(tc.scheme)
		if (err == nil) != built {
			t.Errorf("CheckScheme(%s) = %v with tags %q", tc.scheme, err, Tags())
			continue
		}
		if err != nil {
			want := strings.ToLower(tc.scheme) + ":// needs a flurry built with -tags " + tc.tag + " (or flurry_full)"
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("CheckScheme(%s) = %q, want it to start %q", tc.scheme, err, want)
			}
		}
	}
}
