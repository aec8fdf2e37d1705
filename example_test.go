package flurry_test

import (
	"encoding/json"
	"fmt"

	"github.com/flurryid/flurry"
)

func ExampleID() {
	id := flurry.ID(1541815603606036480)
	// JSON carries an ID as a decimal string: JavaScript numbers lose digits above 2^53.
	b, _ := json.Marshal(map[string]flurry.ID{"id": id})
	fmt.Println(id, string(b))

	var back struct{ ID flurry.ID }
	_ = json.Unmarshal([]byte(`{"ID": 1541815603606036480}`), &back) // a number is accepted too
	fmt.Println(back.ID == id)
	// Output:
	// 1541815603606036480 {"id":"1541815603606036480"}
	// true
}

func ExampleParseID() {
	id, err := flurry.ParseID("1541815603606036480")
	fmt.Println(int64(id), err)
	_, err = flurry.ParseID("-5")
	fmt.Println(err)
	// Output:
	// 1541815603606036480 <nil>
	// flurry: invalid ID: "-5": IDs are never negative
}

func ExampleID_Scan() {
	// database/sql calls Scan with the column's value: BIGINT, text or bytes.
	var id flurry.ID
	for _, v := range []any{int64(42), []byte("43"), "44", int64(-1)} {
		err := id.Scan(v)
		fmt.Println(id, err)
	}
	// Output:
	// 42 <nil>
	// 43 <nil>
	// 44 <nil>
	// 44 flurry: invalid ID: -1 is negative
}
