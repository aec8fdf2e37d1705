package flurry_test

import (
	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/redisgen"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/snowflake"
)

// The generators the Source documentation names implement it.
var (
	_ flurry.Source = (*snowflake.Generator)(nil)
	_ flurry.Source = (*segment.Allocator)(nil)
	_ flurry.Source = (*redisgen.Generator)(nil)
)
