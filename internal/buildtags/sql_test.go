//go:build flurry_sql || flurry_full

package buildtags

func init() { compiled = append(compiled, "SQL") }
