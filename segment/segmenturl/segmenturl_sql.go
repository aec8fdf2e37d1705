//go:build flurry_full || flurry_sql

package segmenturl

import (
	"context"

	"net/url"

	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/sqlstore"
)

func addSQL(m map[string]storeurl.Opener[segment.Store], skipCreate bool) {
	sql := func(ctx context.Context, u string) (segment.Store, error) {
		o, err := sqlstore.ParseURL(u)
		if err != nil {
			return nil, err
		}
		o.SkipCreate = skipCreate && plainSchema(u)
		return sqlstore.OpenAny(ctx, o)
	}
	storeurl.Register(m, "SQL", sql)
}

// plainSchema reports whether a SQL URL uses flurry's own tables by default (no
// schema= key, no tiny_id_info table): the case where Open would create tables. The
// Leaf and TinyID schemas never create any.
func plainSchema(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	q := u.Query()
	return !q.Has("schema") && q.Get("table") != sqlstore.TinyIDTable
}
