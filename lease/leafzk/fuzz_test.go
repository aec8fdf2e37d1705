package leafzk

import (
	"unicode/utf8"

	"testing"

	"github.com/flurryid/flurry/verify/leasetest"
)

// FuzzParseURL: see leasetest.FuzzURL.
func FuzzParseURL(f *testing.F) {
	leasetest.FuzzURL(f, []string{"leafzk://u:hunter2pw@127.0.0.1:2181,127.0.0.1:2182/n?addr=10.0.0.5:8080", "leafzk://h:1/n?replace=[::1]:80&margin=5s", "leafzk://h/?x=1"}, func(raw string) error {
		_, err := ParseURL(raw)
		return err
	})
}

// FuzzLeafData: any node data reads without a panic, and what flurry writes reads
// back as written.
func FuzzLeafData(f *testing.F) {
	for _, s := range []string{`{"ip":"10.0.0.5","port":"8080","timestamp":1}`, `{"timestamp":"7"}`, `{}`, `null`, `{"ip":1e999}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := parseEndpoint(data)
		if err != nil {
			return
		}
		if back, err := parseEndpoint(e.marshal()); err != nil || back != e {
			t.Fatalf("%q read as %+v, written as %s, read back as %+v, %v", data, e, e.marshal(), back, err)
		}
	})
}

func FuzzEndpointWrite(f *testing.F) {
	f.Add("10.0.0.5", "8080", int64(1))
	f.Add("\x7f<&>\xff", "", int64(-1))
	f.Fuzz(func(t *testing.T, ip, port string, ts int64) {
		e := endpoint{IP: ip, Port: port, Timestamp: ts}
		back, err := parseEndpoint(e.marshal())
		if err != nil || utf8.ValidString(ip) && utf8.ValidString(port) && back != e {
			t.Fatalf("%+v written as %s, read back as %+v, %v", e, e.marshal(), back, err)
		}
	})
}
