package storeurl

import (
	"fmt"
	"net/url"
)

// FileDir returns the directory a file:///absolute/dir or file:relative/dir URL
// names, for the file stores of lease and segment; pkg prefixes its errors. The
// file stores take no query keys and no host other than localhost.
func FileDir(pkg, rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "file" {
		return "", fmt.Errorf("%s: %q is not a file:///dir URL", pkg, rawURL)
	}
	if u.RawQuery != "" {
		return "", fmt.Errorf("%s: %q: the file store takes no options", pkg, rawURL)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("%s: %q names host %q; use file:///absolute/dir", pkg, rawURL, u.Host)
	}
	dir := u.Path
	if dir == "" {
		dir = u.Opaque
	}
	if dir == "" {
		return "", fmt.Errorf("%s: %q names no directory", pkg, rawURL)
	}
	return dir, nil
}
