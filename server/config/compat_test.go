package config

import (
	"strings"
	"testing"

	"github.com/flurryid/flurry/verify/testenv"
)

// TestCompatSections: the leaf: and tinyid: sections are checked with the file's
// lines, and either one alone is a complete configuration (no namespace needed).
func TestCompatSections(t *testing.T) {
	t.Run("valid", func(t *testing.T) {
		testenv.NeedScheme(t, "mysql")
		for _, ok := range []string{
			"leaf:\n  segment:\n    stores: ['mysql://u@h:3306/leaf?table=leaf_alloc&schema=leaf']\n",
			"tinyid:\n  stores: ['mysql://u@h:3306/t?table=tiny_id_info']\n  prefix: /ids\n  batch_size_max: 10\n  reload: 5s\n",
		} {
			if _, err := Parse("c.yaml", []byte(ok), nil); err != nil {
				t.Errorf("%q: %v", ok, err)
			}
		}
	})
	for _, tc := range []struct{ yaml, want string }{
		{"leaf:\n  reload: 1m\n", "leaf.segment.stores: give the Leaf databases"},
		{"leaf:\n  segment:\n    stores: ['mysql://u@h/leaf']\n    tag: x\n", "leaf.segment: tag and create do not apply"},
		{"leaf:\n  segment:\n    stores: ['mysql://u@h/leaf']\n  reload: soon\n", "leaf.reload: \"soon\" is not a duration"},
		{"tinyid:\n  prefix: tinyid/\n  stores: ['mysql://u@h/t']\n", "tinyid.prefix: \"tinyid/\": give a path"},
		{"tinyid:\n  stores: ['redis://h:6379/0']\n", "tinyid.stores.0"},
		{"tinyid:\n  stores: ['mysql://u@h/t']\n  batch_size_max: -1\n", "tinyid.batch_size_max: -1 is out of range"},
		{"tinyid: {}\n", "tinyid.stores: give the tinyid databases"},
	} {
		_, err := Parse("c.yaml", []byte(tc.yaml), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want it to say %q", tc.yaml, err, tc.want)
		}
	}
}
