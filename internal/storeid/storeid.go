// Package storeid names the data a store keeps, so that two servers can tell
// whether they share one store: the identities the lease and segment stores report
// (lease.Identifier, segment.Identifier) are built here, and the machine-derived
// node value of the embedded default (Machine).
package storeid

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// IdentityFile is the file in a file store's directory that holds the store's
// random identity, written once by the first process that asks for it.
const IdentityFile = "identity"

// Random returns 16 random bytes in hex.
func Random() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// File returns the identity of the file store in dir:
// "file:<host>:<dir>:<device.inode>:<random>", the random part read from dir's
// identity file, which is created on the first call. Two processes that create it
// at once agree on one (the file appears whole, by a hard link, or not at all).
// Processes on one machine that share the directory get one identity; a copy of
// the directory, here or on another machine, gets another (its path, host or
// inode differs), though it carries the same random part.
func File(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	path := filepath.Join(abs, IdentityFile)
	id, err := readID(path)
	if errors.Is(err, os.ErrNotExist) {
		id, err = createID(abs, path)
	}
	if err != nil {
		return "", err
	}
	return "file:" + Host() + ":" + abs + ":" + inode(abs) + ":" + id, nil
}

func readID(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(b))
	if len(id) < 16 {
		return "", fmt.Errorf("%s holds no store identity (%q): delete it and start again", path, id)
	}
	return id, nil
}

func createID(dir, path string) (string, error) {
	tmp, err := os.CreateTemp(dir, IdentityFile+".tmp*")
	if err != nil {
		return "", fmt.Errorf("writing the store's identity in %s: %w", dir, err)
	}
	defer os.Remove(tmp.Name())
	id := Random()
	_, err = tmp.WriteString(id + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("writing the store's identity in %s: %w", dir, err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return readID(path) // another process wrote it first: use that one
		}
		return "", fmt.Errorf("writing the store's identity in %s: %w", dir, err)
	}
	return id, nil
}

// Host names this machine for identities: its host name, or "localhost".
func Host() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	return h
}

// Machine returns a number derived from this machine, the same on every start and
// most likely different on another machine: a hash of /etc/machine-id (or
// /var/lib/dbus/machine-id), the host's first private IPv4 address and its host
// name, all three, since containers made from one image share a machine-id and
// often a host name pattern but not an address. The embedded default lease store
// prefers Machine() mod the pool's size as its node value, so that two servers
// left on the defaults on two machines collide only when the two numbers agree mod
// that size (1 in 1,024 for the default layout) rather than always.
func Machine() uint64 {
	h := fnv.New64a()
	for _, p := range []string{"/etc/machine-id", "/var/lib/dbus/machine-id"} {
		if b, err := os.ReadFile(p); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			h.Write([]byte(strings.TrimSpace(string(b))))
			break
		}
	}
	if ip := privateIPv4(); ip != nil {
		h.Write(ip)
	}
	h.Write([]byte(Host()))
	return h.Sum64()
}

func privateIPv4() net.IP {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip := n.IP.To4(); ip != nil && ip.IsPrivate() {
				return ip
			}
		}
	}
	return nil
}
