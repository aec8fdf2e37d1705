package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/flurryid/flurry/layout"
)

func TestLayoutsTable(t *testing.T) {
	r := cli(t, "", "layouts")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("layouts: %+v", r)
	}
	rows := map[string]string{}
	for _, l := range lines(r.stdout) {
		if f := strings.Fields(l); len(f) > 0 {
			rows[f[0]] = l
		}
	}
	if !strings.Contains(rows["NAME"], "IDS/S/NODE") {
		t.Errorf("no header row in\n%s", r.stdout)
	}
	for _, name := range layout.PresetNames() {
		if rows[name] == "" {
			t.Errorf("preset %s is missing from\n%s", name, r.stdout)
		}
	}
	if row := rows["baidu"]; !strings.Contains(row, "EXHAUSTED (2024-11-20)") || !strings.Contains(row, "8,192") {
		t.Errorf("baidu row %q is not marked exhausted on 2024-11-20", row)
	}
	if row := rows["twitter"]; !strings.Contains(row, "2080-07-10") || !strings.Contains(row, "4,096,000") || !strings.Contains(row, "1,024") || strings.Contains(row, "EXHAUSTED") {
		t.Errorf("twitter row %q", row)
	}
	if row := rows["jssafe"]; !strings.Contains(row, " yes ") {
		t.Errorf("jssafe row %q is not JS-safe", row)
	}
	if !strings.Contains(r.stdout, "baidu: EXHAUSTED: its time field ran out on 2024-11-20") {
		t.Errorf("no note about baidu in\n%s", r.stdout)
	}
}

func TestLayoutsJSON(t *testing.T) {
	r := cli(t, "", "layouts", "--json")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("layouts --json: %+v", r)
	}
	var facts []layout.Facts
	if err := json.Unmarshal([]byte(r.stdout), &facts); err != nil {
		t.Fatalf("layouts --json is not a JSON array of facts: %v\n%s", err, r.stdout)
	}
	if len(facts) != len(layout.PresetNames()) {
		t.Fatalf("%d facts, want %d", len(facts), len(layout.PresetNames()))
	}
	for _, f := range facts {
		l, err := layout.Parse(f.Layout)
		if err != nil {
			t.Errorf("%s: layout %q does not parse back: %v", f.Name, f.Layout, err)
			continue
		}
		p, _ := layout.Lookup(f.Name)
		if !l.Equal(p) {
			t.Errorf("%s: layout %q is not the preset", f.Name, f.Layout)
		}
		if f.Exhausted != (f.Name == "baidu") {
			t.Errorf("%s: exhausted = %v", f.Name, f.Exhausted)
		}
		if f.Name == "baidu" && f.Lifetime.Format("2006-01-02") != "2024-11-20" {
			t.Errorf("baidu lifetime %v", f.Lifetime)
		}
	}
}

func TestLayoutsDetails(t *testing.T) {
	text := "time:41:1ms:2020-01-01T00:00:00Z,worker:10,seq:12"
	r := cli(t, "", "layouts", "twitter", text)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("layouts twitter %s: %+v", text, r)
	}
	for _, want := range []string{
		"name:           twitter",
		"layout:         time:41:1ms:2010-11-04T01:42:54.657Z,datacenter:5,worker:5,seq:12",
		"about:          Twitter Snowflake",
		"runs out:       2080-07-10T",
		"layout:         " + text,
		"nodes:          1,024",
		"js-safe:        no: IDs pass 2^53 from",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	r = cli(t, "", "layouts", "--json", "jssafe")
	var facts []layout.Facts
	if err := json.Unmarshal([]byte(r.stdout), &facts); err != nil || len(facts) != 1 || !facts[0].JSSafe {
		t.Errorf("layouts --json jssafe = %v, %v", facts, err)
	}
	wantOneLineError(t, cli(t, "", "layouts", "bogus"), 2, `layouts: unknown preset "bogus"`)
	wantOneLineError(t, cli(t, "", "layouts", "time:64:1ms:2020-01-01T00:00:00Z,seq:12"), 2, "layouts: invalid")
}
