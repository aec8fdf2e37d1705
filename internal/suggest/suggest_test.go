package suggest

import "testing"

func TestClosest(t *testing.T) {
	presets := []string{"baidu", "discord", "gameserver", "instagram", "jssafe", "leaf", "mastodon", "sonyflake", "twitter"}
	keys := []string{"strategy", "snowflake", "segment", "redis", "layout", "node", "lease"}
	for _, tc := range []struct {
		word  string
		cands []string
		want  string
	}{
		{"twiter", presets, "twitter"},
		{"Twtiter", presets, "twitter"}, // a swap, case aside
		{"sonyflak", presets, "sonyflake"},
		{"lef", presets, "leaf"},
		{"xyz", presets, ""},
		{"le", presets, ""}, // too short to be sure
		{"layuot", keys, "layout"},
		{"stratgey", keys, "strategy"},
		{"segmnet", keys, "segment"},
		{"nodes", keys, "node"},
		{"timeout", keys, ""},
	} {
		got, ok := Closest(tc.word, tc.cands)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("Closest(%q) = %q, %v; want %q", tc.word, got, ok, tc.want)
		}
	}
}
