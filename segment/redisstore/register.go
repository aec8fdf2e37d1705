package redisstore

import (
	"context"

	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/segmenturl"
)

// Importing the package registers its URL schemes with segment/segmenturl, so
// that segmenturl.Open opens them. The store creates nothing before a tag is
// created, so OpenExisting needs nothing else.
func init() {
	open := storeurl.ParseOpen[segment.Store](ParseURL, Open)
	for _, s := range []string{"redis", "rediss", "redis+sentinel", "rediss+sentinel"} {
		segmenturl.Register(s, func(ctx context.Context, rawURL string, _ segmenturl.OpenOptions) (segment.Store, error) {
			return open(ctx, rawURL)
		})
	}
}
