//go:build flurry_redis || flurry_full

package buildtags

func init() { compiled = append(compiled, "Redis") }
