package config

import (
	"errors"
	"strings"
	"testing"
)

const regionNS = "namespaces:\n  orders:\n    strategy: snowflake\n    snowflake: {layout: twitter}\n"

func TestRegionBlock(t *testing.T) {
	c, err := Parse("t.yaml", []byte("region: {name: eu-west, value: 1, registry: 'file:///var/lib/flurry-regions'}\n"+regionNS), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Region == nil || c.Region.Name != "eu-west" || *c.Region.Value != 1 || c.Region.FieldName() != "datacenter" {
		t.Fatalf("region %+v", c.Region)
	}
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"nothing given", "region: {}\n" + regionNS, []string{"t.yaml:1: region.name: give the region's name", "region.value: give the region value", "region.registry: give the registry"}},
		{"bad name and value", "region: {name: 'eu west', value: -1, registry: 'file:///r'}\n" + regionNS, []string{"region.name: region name \"eu west\"", "region.value: -1 is negative"}},
		{"bad registry", "region: {name: eu, value: 1, registry: 'mongodb://x'}\n" + regionNS, []string{"region.registry", "unknown scheme \"mongodb\""}},
		{"value too wide", "region: {name: eu, value: 32, registry: 'file:///r'}\n" + regionNS, []string{"region.value: 32 does not fit the 5 bits of field datacenter in namespace orders's layout (0..31)"}},
		{"layout without the field", "region: {name: eu, value: 1, registry: 'file:///r'}\nnamespaces:\n  a: {strategy: snowflake}\n",
			[]string{"namespaces.a.snowflake.layout: the region value fills node field \"datacenter\", which layout"}},
		{"namespace fixes the field", "region: {name: eu, value: 1, registry: 'file:///r'}\nnamespaces:\n  a:\n    strategy: snowflake\n    snowflake: {layout: twitter, node: datacenter=2}\n",
			[]string{"t.yaml:5: namespaces.a.snowflake.node: node gives datacenter, which the region fills"}},
		{"namespace leases the field", "region: {name: eu, value: 1, registry: 'file:///r'}\nnamespaces:\n  a:\n    strategy: snowflake\n    snowflake:\n      layout: twitter\n      lease: {fields: [worker, datacenter]}\n",
			[]string{"namespaces.a.snowflake.lease.fields.1: datacenter is the region's field"}},
		{"another field", "region: {name: eu, value: 1, field: worker, registry: 'file:///r', verify: soon}\n" + regionNS + "  b:\n    strategy: snowflake\n    snowflake: {layout: twitter, node: worker=3}\n",
			[]string{"namespaces.b.snowflake.node: node gives worker", "region.verify"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tc.yaml), nil)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("got %v, want ErrInvalid", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("no %q in:\n%v", w, err)
				}
			}
		})
	}
}
