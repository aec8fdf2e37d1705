package objectid_test

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/objectid"
)

func ExampleGenerator_Next() {
	g, err := objectid.New(objectid.Options{}) // system clock, crypto/rand
	if err != nil {
		panic(err)
	}
	a, _ := g.Next(context.Background())
	b, _ := g.Next(context.Background())
	fmt.Println(len(a.String()), a.Random() == b.Random(), (b.Counter()-a.Counter())&0xffffff)
	// Output: 24 true 1
}

// With a fixed clock and fixed random bytes (5 for the random value, 3 for the
// counter's start) the generator makes the ObjectId of MongoDB's examples.
func ExampleGenerator_Next_fixed() {
	g, _ := objectid.New(objectid.Options{
		Clock: clock.NewFake(time.Date(2012, 10, 17, 21, 13, 27, 0, time.UTC)),
		Rand:  bytes.NewReader([]byte{0xbc, 0xf8, 0x6c, 0xd7, 0x99, 0x43, 0x90, 0x11}),
	})
	id, _ := g.Next(context.Background())
	fmt.Println(id)
	// Output: 507f1f77bcf86cd799439011
}

func ExampleParse() {
	id, err := objectid.Parse("507f1f77bcf86cd799439011")
	fmt.Println(id.Time(), fmt.Sprintf("%x %#x", id.Random(), id.Counter()), err)
	_, err = objectid.Parse(`ObjectId("507f1f77bcf86cd799439011")`)
	fmt.Println(err)
	// Output:
	// 2012-10-17 21:13:27 +0000 UTC bcf86cd799 0x439011 <nil>
	// objectid: invalid ObjectId: "ObjectId(\"507f1f77bcf86cd799439011\")": want 24 hex digits, got 36 characters
}
