package sqlstore

import (
	"context"
	"net/url"

	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/segmenturl"
)

// Importing the package registers its URL schemes with segment/segmenturl, so
// that segmenturl.Open opens them, with OpenAny: flurry's tables, Leaf's or
// tinyid's, as the URL says.
func init() {
	for _, s := range []string{"sqlite", "postgres", "postgresql", "mysql"} {
		segmenturl.Register(s, openRegistered)
	}
}

// openRegistered is the segmenturl.Opener of the SQL stores. For OpenExisting it
// creates no tables: a listing of a database that has none fails instead of
// leaving empty tables behind.
func openRegistered(ctx context.Context, rawURL string, oo segmenturl.OpenOptions) (segment.Store, error) {
	o, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	o.SkipCreate = oo.Existing && plainSchema(rawURL)
	return OpenAny(ctx, o)
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
	return !q.Has("schema") && q.Get("table") != TinyIDTable
}
