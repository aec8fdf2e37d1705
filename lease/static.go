package lease

import (
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net"
	"strconv"
	"strings"
)

// Ordinal returns the ordinal of a Kubernetes StatefulSet pod from its hostname:
// "orders-3" -> 3. Pods of a StatefulSet keep their ordinal across restarts and no two
// live pods share one, so the ordinal is a sound node value for one StatefulSet; use
// it as Options.Fixed, so the lease still keeps the value's high-water mark and
// refuses a second holder (during a botched rollout, or a second StatefulSet with the
// same name in another namespace writing to the same store).
func Ordinal(hostname string) (int64, error) {
	i := strings.LastIndexByte(hostname, '-')
	if i <= 0 || i == len(hostname)-1 {
		return 0, fmt.Errorf("lease: hostname %q does not end in -<ordinal> as a StatefulSet pod's does", hostname)
	}
	v, err := strconv.ParseInt(hostname[i+1:], 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("lease: hostname %q does not end in -<ordinal> as a StatefulSet pod's does", hostname)
	}
	return v, nil
}

// ErrNoAddress is returned by FromIP when no usable address is found.
var ErrNoAddress = errors.New("lease: no non-loopback IP address")

// FromIP derives a node value below 2^bits from an IP address, as many snowflake
// deployments do, and logs a warning, because that is a known source of duplicate
// IDs in production: two hosts whose addresses agree in the bits kept (10.0.1.5 and
// 10.0.9.5 under "last octet mod 32") get the same value. It keeps the low bits of the address when
// they are enough to tell hosts of one /(32-bits) subnet apart, which is the only case
// where it is safe; otherwise it hashes the address, which is a guess. Use it only as
// Options.Fixed, so that the lease refuses the second holder of a value instead of
// issuing duplicates.
func FromIP(ip net.IP, bits int, log *slog.Logger) (int64, error) {
	if bits < 1 || bits > 22 {
		return 0, fmt.Errorf("lease: %d bits: from 1 to 22", bits)
	}
	if log == nil {
		log = slog.Default()
	}
	v4 := ip.To4()
	var v int64
	how := "low bits of the address"
	if v4 != nil {
		v = int64(uint32(v4[0])<<24|uint32(v4[1])<<16|uint32(v4[2])<<8|uint32(v4[3])) & (1<<bits - 1)
	} else {
		h := fnv.New64a()
		h.Write(ip)
		v = int64(h.Sum64() & (1<<bits - 1))
		how = "a hash of the IPv6 address"
	}
	log.Warn("lease: node value derived from the IP address; two hosts whose addresses share these low bits get the same node value and their IDs collide; prefer a lease pool, a StatefulSet ordinal or a configured value",
		"ip", ip.String(), "bits", bits, "value", v, "from", how)
	return v, nil
}

// LocalIP returns the first non-loopback, up interface address of this host.
func LocalIP() (net.IP, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
				return n.IP, nil
			}
		}
	}
	return nil, ErrNoAddress
}
