package uuidv7_test

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/uuidv7"
)

func ExampleGenerator_Next() {
	g, err := uuidv7.New(uuidv7.Options{}) // system clock, crypto/rand
	if err != nil {
		panic(err)
	}
	a, _ := g.Next(context.Background())
	b, _ := g.Next(context.Background())
	fmt.Println(a.Version(), a.Variant(), a.Compare(b), a.String() < b.String())
	// Output: 7 rfc9562 -1 true
}

// With a fixed clock and fixed random bits, the generator reproduces the example of
// RFC 9562 Appendix A.6.
func ExampleGenerator_Next_rfcVector() {
	at := time.UnixMilli(0x017F22E279B0).Add(797608 * time.Nanosecond) // fraction 0xcc3
	g, _ := uuidv7.New(uuidv7.Options{
		Clock: clock.NewFake(at),
		Rand:  bytes.NewReader(bytes.Repeat([]byte{0x98, 0xc4, 0xdc, 0x0c, 0x0c, 0x07, 0x39, 0x8f}, 128)),
	})
	u, _ := g.Next(context.Background())
	fmt.Println(u, u.Time())
	// Output: 017f22e2-79b0-7cc3-98c4-dc0c0c07398f 2022-02-22 19:22:22 +0000 UTC
}

func ExampleParse() {
	u, err := uuidv7.Parse("urn:uuid:017F22E2-79B0-7CC3-98C4-DC0C0C07398F")
	fmt.Println(u, u.Time().Format(time.RFC3339Nano), err)
	_, err = uuidv7.Parse("9f5b2a8e-0c1d-4e8b-9c3a-1b2c3d4e5f60")
	fmt.Println(err)
	// Output:
	// 017f22e2-79b0-7cc3-98c4-dc0c0c07398f 2022-02-22T19:22:22Z <nil>
	// uuidv7: invalid UUID: "9f5b2a8e-0c1d-4e8b-9c3a-1b2c3d4e5f60" is a version 4 UUID, want version 7
}
