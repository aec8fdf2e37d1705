// Package netns builds a private network of Linux network namespaces for the fault
// harness: one namespace per host, each with a veth pair into a bridge that lives in a
// namespace of its own, addresses from one subnet used only inside these namespaces,
// and no route, NAT or forwarding to anything outside. Nothing is created in the root
// namespace: veth ends are created directly inside their namespaces.
//
// Faults are applied inside a host's namespace: an nftables table (drop or reject
// rules per peer and port) and a tc netem qdisc on its interface.
//
// It runs iproute2 (ip, tc) and nft, and needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN).
package netns

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrUnavailable means this machine cannot run the harness's network: not root, or
// ip/nft/tc missing, or network namespaces not permitted. Tests skip on it.
var ErrUnavailable = errors.New("network namespaces unavailable")

// Options configure a Net. The zero value is not valid: Prefix is required.
type Options struct {
	// Prefix starts the name of every namespace (e.g. "fh"); with a host name the
	// namespace name must fit Linux's 15 characters. Required.
	Prefix string
	// Subnet gives the hosts' addresses (.1 upwards). Zero means 10.213.0.0/16.
	Subnet netip.Prefix
	// LockWait bounds the wait for another Net with the same prefix on this machine
	// to close (New removes the namespaces a prefix's earlier Net left, so two at
	// once would break each other). Zero means 5 minutes.
	LockWait time.Duration
	// LockDir holds the prefix's lock file, flurry-netns-PREFIX.lock. Empty means
	// os.TempDir(), shared by every run on the machine: Nets whose lock files are
	// in different directories do not wait for each other, so give one only with
	// a prefix no other run uses.
	LockDir string
}

// Net is a private network of hosts joined by one bridge.
type Net struct {
	lock   *os.File
	prefix string
	subnet netip.Prefix
	bridge string // namespace of the bridge

	mu    sync.Mutex
	hosts []*Host
	next  netip.Addr
}

// Host is one network namespace of a Net, with one interface (eth0) and one address.
type Host struct {
	// Name is the host's short name (e.g. "n1"); NS its namespace (prefix+name).
	Name, NS string
	// Addr is its address on the bridge.
	Addr netip.Addr

	mu    sync.Mutex
	rules map[string][]Rule // by fault name
	netem string            // netem arguments in force, "" for none
}

// Check reports ErrUnavailable (wrapped with the reason) when this machine cannot
// create the harness's namespaces.
func Check(ctx context.Context) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: not root (the harness creates network namespaces)", ErrUnavailable)
	}
	for _, tool := range []string{"ip", "nft", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%w: %s not found (Debian: apt-get install iproute2 nftables)", ErrUnavailable, tool)
		}
	}
	if out, err := run(ctx, "ip", "netns", "list"); err != nil {
		return fmt.Errorf("%w: ip netns list: %v %s", ErrUnavailable, err, out)
	}
	return nil
}

// Cleanup deletes every namespace whose name starts with prefix, first killing the
// processes inside it (leftovers of a crashed run of this harness).
func Cleanup(ctx context.Context, prefix string) error {
	if prefix == "" {
		return errors.New("netns: cleanup needs a prefix")
	}
	names, err := List(ctx, prefix)
	if err != nil {
		return err
	}
	var errs []error
	for _, ns := range names {
		killAll(ctx, ns)
		if out, err := run(ctx, "ip", "netns", "delete", ns); err != nil {
			errs = append(errs, fmt.Errorf("netns: delete %s: %v %s", ns, err, out))
		}
	}
	return errors.Join(errs...)
}

// List returns the namespaces whose names start with prefix.
func List(ctx context.Context, prefix string) ([]string, error) {
	out, err := run(ctx, "ip", "netns", "list")
	if err != nil {
		return nil, fmt.Errorf("netns: ip netns list: %v %s", err, out)
	}
	var names []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && strings.HasPrefix(f[0], prefix) {
			names = append(names, f[0])
		}
	}
	return names, nil
}

// killAll SIGKILLs every process in namespace ns and waits briefly for them to go.
func killAll(ctx context.Context, ns string) {
	for range 20 {
		out, _ := run(ctx, "ip", "netns", "pids", ns)
		pids := strings.Fields(out)
		if len(pids) == 0 {
			return
		}
		for _, p := range pids {
			if pid, err := strconv.Atoi(p); err == nil && pid > 1 && pid != os.Getpid() {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// New removes leftover namespaces with the prefix and creates the bridge namespace.
func New(ctx context.Context, o Options) (*Net, error) {
	if o.Prefix == "" || len(o.Prefix) > 8 {
		return nil, fmt.Errorf("netns: prefix %q must be 1 to 8 characters", o.Prefix)
	}
	if !o.Subnet.IsValid() {
		o.Subnet = netip.MustParsePrefix("10.213.0.0/16")
	}
	o.Subnet = o.Subnet.Masked()
	if err := Check(ctx); err != nil {
		return nil, err
	}
	if o.LockWait == 0 {
		o.LockWait = 5 * time.Minute
	}
	lock, err := lockPrefix(ctx, cmp.Or(o.LockDir, os.TempDir()), o.Prefix, o.LockWait)
	if err != nil {
		return nil, err
	}
	if err := Cleanup(ctx, o.Prefix); err != nil {
		lock.Close()
		return nil, err
	}
	n := &Net{lock: lock, prefix: o.Prefix, subnet: o.Subnet, bridge: o.Prefix + "br", next: o.Subnet.Addr().Next()}
	steps := [][]string{
		{"ip", "netns", "add", n.bridge},
		{"ip", "-n", n.bridge, "link", "set", "lo", "up"},
		{"ip", "-n", n.bridge, "link", "add", "br0", "type", "bridge"},
		{"ip", "-n", n.bridge, "link", "set", "br0", "up"},
	}
	for _, s := range steps {
		if out, err := run(ctx, s[0], s[1:]...); err != nil {
			_ = n.Close(context.Background())
			return nil, fmt.Errorf("netns: %s: %v %s", strings.Join(s, " "), err, out)
		}
	}
	return n, nil
}

// AddHost creates namespace prefix+name with eth0 on the bridge and the next address.
func (n *Net) AddHost(ctx context.Context, name string) (*Host, error) {
	ns := n.prefix + name
	if len(ns) > 15 || name == "br" || name == "" {
		return nil, fmt.Errorf("netns: host name %q: namespace %q must be at most 15 characters and not the bridge's", name, ns)
	}
	n.mu.Lock()
	addr := n.next
	if !n.subnet.Contains(addr) {
		n.mu.Unlock()
		return nil, fmt.Errorf("netns: subnet %s is full", n.subnet)
	}
	n.next = addr.Next()
	h := &Host{Name: name, NS: ns, Addr: addr, rules: map[string][]Rule{}}
	n.hosts = append(n.hosts, h)
	n.mu.Unlock()

	peer := "v" + name // in the bridge namespace only
	cidr := netip.PrefixFrom(addr, n.subnet.Bits()).String()
	steps := [][]string{
		{"ip", "netns", "add", ns},
		{"ip", "-n", ns, "link", "set", "lo", "up"},
		{"ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", peer, "netns", n.bridge},
		{"ip", "-n", n.bridge, "link", "set", peer, "master", "br0"},
		{"ip", "-n", n.bridge, "link", "set", peer, "up"},
		{"ip", "-n", ns, "addr", "add", cidr, "dev", "eth0"},
		{"ip", "-n", ns, "link", "set", "eth0", "up"},
	}
	for _, s := range steps {
		if out, err := run(ctx, s[0], s[1:]...); err != nil {
			return nil, fmt.Errorf("netns: host %s: %s: %v %s", name, strings.Join(s, " "), err, out)
		}
	}
	return h, nil
}

// Hosts returns the hosts added so far.
func (n *Net) Hosts() []*Host {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.hosts)
}

// Close kills every process left in the hosts' namespaces and deletes all of them,
// the bridge's included. It is safe to call more than once.
func (n *Net) Close(ctx context.Context) error {
	err := Cleanup(ctx, n.prefix)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.lock != nil && err == nil {
		n.lock.Close()
		n.lock = nil
	}
	return err
}

// lockPrefix takes an exclusive lock for a prefix in dir, waiting up to d.
func lockPrefix(ctx context.Context, dir, prefix string, d time.Duration) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "flurry-netns-"+prefix+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("netns: %w", err)
	}
	deadline := time.Now().Add(d)
	for {
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err == nil {
			return f, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			f.Close()
			return nil, fmt.Errorf("netns: another network with prefix %q is in use (%s held for %s)", prefix, f.Name(), d)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// Command returns a command that runs name inside the host's namespace. ip netns
// exec execs the program after entering the namespace, so the command's process is
// the program itself (signals reach it directly).
func (h *Host) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", h.NS, name}, args...)...)
}

// Run runs name inside the host's namespace and returns its combined output.
func (h *Host) Run(ctx context.Context, name string, args ...string) (string, error) {
	out, err := run(ctx, "ip", append([]string{"netns", "exec", h.NS, name}, args...)...)
	if err != nil {
		return out, fmt.Errorf("%s on %s: %w: %s", name, h.Name, err, strings.TrimSpace(out))
	}
	return out, nil
}

// Action is what a rule does with a matching packet.
type Action int

const (
	// Drop discards silently: the peer seems to hang.
	Drop Action = iota
	// Reject refuses: TCP gets a reset (connection refused, or reset).
	Reject
	// Lose drops Rule.Percent of the packets at random, both ways (netem's loss, for
	// kernels built without sch_netem).
	Lose
)

// Rule matches TCP/IP traffic between this host and one peer address, optionally
// only the peer's TCP port (PeerPort) or this host's (LocalPort).
//
// Drop applies in both directions: packets to the peer and from it vanish, so either
// side hangs. Reject applies to what the peer sends: it gets a TCP reset for every
// packet (connection refused; an established connection is reset), as from a closed
// port. Put a Reject rule on the host whose service should refuse (the reset then
// crosses the bridge like a real one; a reset made on the sender's own output path is
// not delivered to its socket).
type Rule struct {
	Peer      netip.Addr
	PeerPort  int // 0: every port
	LocalPort int // 0: every port
	Action    Action
	Percent   int // for Lose: 1 to 100
}

// Block installs rules under a name (a fault's), replacing that name's earlier
// rules; the host's whole table is rewritten atomically.
func (h *Host) Block(ctx context.Context, name string, rules ...Rule) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rules[name] = slices.Clone(rules)
	return h.apply(ctx)
}

// Unblock removes the rules installed under name.
func (h *Host) Unblock(ctx context.Context, name string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.rules, name)
	return h.apply(ctx)
}

func (h *Host) apply(ctx context.Context) error {
	var b strings.Builder
	b.WriteString("table inet fh\ndelete table inet fh\ntable inet fh {\n")
	names := make([]string, 0, len(h.rules))
	for k := range h.rules {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, chain := range []string{"output", "input"} {
		fmt.Fprintf(&b, " chain %s {\n  type filter hook %s priority 0; policy accept;\n", chain, chain)
		for _, name := range names {
			for _, r := range h.rules[name] {
				if st := r.nft(chain == "output"); st != "" {
					b.WriteString("  " + st + "\n")
				}
			}
		}
		b.WriteString(" }\n")
	}
	b.WriteString("}\n")
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", h.NS, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("netns: nft on %s: %v: %s", h.Name, err, out)
	}
	return nil
}

// nft returns the rule's nft statements for the output or the input chain ("" for none).
func (r Rule) nft(out bool) string {
	fam := "ip"
	if r.Peer.Is6() {
		fam = "ip6"
	}
	if out && r.Action == Reject {
		return "" // the reset is made on input; our own replies must pass
	}
	s, dir := "", "saddr"
	peer, local := "sport", "dport"
	if out {
		dir, peer, local = "daddr", "dport", "sport"
	}
	if r.Peer.IsValid() {
		s = fam + " " + dir + " " + r.Peer.String()
	}
	if r.PeerPort != 0 || r.LocalPort != 0 || r.Action == Reject {
		s += " meta l4proto tcp"
	}
	if r.PeerPort != 0 {
		s += " tcp " + peer + " " + strconv.Itoa(r.PeerPort)
	}
	if r.LocalPort != 0 {
		s += " tcp " + local + " " + strconv.Itoa(r.LocalPort)
	}
	switch r.Action {
	case Reject:
		return s + " reject with tcp reset"
	case Lose:
		if r.Percent >= 100 {
			return s + " drop"
		}
		return fmt.Sprintf("%s numgen random mod 100 < %d drop", s, r.Percent)
	}
	return s + " drop"
}

// Netem puts a tc netem qdisc (the kernel needs sch_netem, which some VM kernels lack:
// Lose rules do the loss part with nftables) on the host's interface with args (e.g. "delay 200ms
// 50ms loss 10%"): every packet the host sends is affected. Empty args remove it.
func (h *Host) Netem(ctx context.Context, args string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if args == "" {
		if h.netem == "" {
			return nil
		}
		if out, err := run(ctx, "ip", "netns", "exec", h.NS, "tc", "qdisc", "del", "dev", "eth0", "root"); err != nil {
			return fmt.Errorf("netns: tc on %s: %v: %s", h.Name, err, out)
		}
		h.netem = ""
		return nil
	}
	a := append([]string{"netns", "exec", h.NS, "tc", "qdisc", "replace", "dev", "eth0", "root", "netem"}, strings.Fields(args)...)
	if out, err := run(ctx, "ip", a...); err != nil {
		return fmt.Errorf("netns: tc on %s: %v: %s", h.Name, err, out)
	}
	h.netem = args
	return nil
}

func run(ctx context.Context, name string, args ...string) (string, error) {
	var b bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	return b.String(), err
}

// DialContext dials address from inside the host's namespace, for the harness's own
// probes and clients (http.Transport.DialContext has this signature). A socket
// belongs to the namespace it was created in for the rest of its life.
func (h *Host) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	var c net.Conn
	err := h.Do(func() error {
		var d net.Dialer
		var err error
		c, err = d.DialContext(ctx, network, address)
		return err
	})
	return c, err
}

// Listen listens on address inside the host's namespace.
func (h *Host) Listen(network, address string) (net.Listener, error) {
	var l net.Listener
	err := h.Do(func() error {
		var err error
		l, err = net.Listen(network, address)
		return err
	})
	return l, err
}

// Do runs f on an OS thread switched into the host's namespace, and waits for it. f
// must not start goroutines that create sockets (they run on other threads).
func (h *Host) Do(f func() error) error {
	ch := make(chan error, 1)
	go func() {
		// A goroutine of its own: if switching back fails, it exits still locked,
		// and the runtime throws the thread away instead of reusing it.
		runtime.LockOSThread()
		self, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- fmt.Errorf("netns: %w", err)
			return
		}
		defer self.Close()
		target, err := os.Open("/run/netns/" + h.NS)
		if err != nil {
			runtime.UnlockOSThread()
			ch <- fmt.Errorf("netns: host %s: %w", h.Name, err)
			return
		}
		defer target.Close()
		if err := setns(target); err != nil {
			runtime.UnlockOSThread()
			ch <- fmt.Errorf("netns: enter %s: %w", h.NS, err)
			return
		}
		err = f()
		if setns(self) != nil {
			ch <- err
			return // stays locked: the thread dies with the goroutine
		}
		runtime.UnlockOSThread()
		ch <- err
	}()
	return <-ch
}

func setns(f *os.File) error {
	return unix.Setns(int(f.Fd()), unix.CLONE_NEWNET)
}
