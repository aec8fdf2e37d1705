package server

import "context"

// builtinText returns the text strategies this build knows. uuidv7 and objectid
// join here when their packages land.
func builtinText() map[string]func(ctx context.Context) (textSource, error) {
	return map[string]func(ctx context.Context) (textSource, error){}
}
