package buildtags

import (
	"strings"
	"testing"
)

func TestTagsMatchConstants(t *testing.T) {
	tags := Tags()
	if Full && tags != "flurry_full" {
		t.Errorf("a full build has tags %q", tags)
	}
	if !SQL && !Redis && !Etcd && tags != "" {
		t.Errorf("a lean build has tags %q", tags)
	}
	for _, f := range Families() {
		if !Full && strings.Contains(tags, f.Tag) != f.Built {
			t.Errorf("family %s built=%v, tags %q", f.Name, f.Built, tags)
		}
	}
}

func TestCheckScheme(t *testing.T) {
	for _, tc := range []struct {
		scheme string
		built  bool
		tag    string
	}{
		{"file", true, ""},
		{"nope", true, ""},
		{"postgres", SQL, "flurry_sql"},
		{"SQLite", SQL, "flurry_sql"},
		{"rediss+sentinel", Redis, "flurry_redis"},
		{"etcd", Etcd, "flurry_etcd"},
	} {
		err := CheckScheme(tc.scheme)
		if (err == nil) != tc.built {
			t.Errorf("CheckScheme(%s) = %v, built %v", tc.scheme, err, tc.built)
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
