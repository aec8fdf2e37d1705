package netns

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Delay holds every packet a host sends for a fixed time before letting it go: tc
// netem's delay for kernels without sch_netem. A rule queues the packets (NFQUEUE,
// with bypass: if the harness is gone they pass) and a
// netlink socket made inside the host's namespace gives each its verdict, accept,
// once it is due. Packets keep their order (one delay for all). The rule is an
// iptables rule (xtables' NFQUEUE target), since nftables' queue expression is
// missing from some kernels.
type Delay struct {
	h     *Host
	fd    int
	queue uint16
	d     time.Duration
	peers []netip.Addr // empty: every packet
	stop  chan struct{}
	wg    sync.WaitGroup
}

// Netlink constants of linux/netfilter/nfnetlink_queue.h.
const (
	nfnlSubsysQueue  = 3
	nfqnlMsgPacket   = 0
	nfqnlMsgVerdict  = 1
	nfqnlMsgConfig   = 2
	nfqaCfgCmd       = 1
	nfqaCfgParams    = 2
	nfqaCfgQueueMax  = 3
	nfqaCfgMask      = 4
	nfqaCfgFlags     = 5
	nfqaPacketHdr    = 1
	nfqaVerdictHdr   = 2
	nfqnlCfgCmdBind  = 1
	nfqnlCopyMeta    = 1
	nfqaCfgFFailOpen = 1
	nfAccept         = 1
)

// StartDelay delays every packet the host sends by d, using NFQUEUE number queue
// (unique among running delays of the host). Stop ends it.
func (h *Host) StartDelay(ctx context.Context, queue uint16, d time.Duration) (*Delay, error) {
	return h.StartDelayTo(ctx, queue, d)
}

// StartDelayTo delays by d only the packets the host sends to the given peers
// (every packet when none is given): a long-distance link to some hosts while the
// others stay near, as between two regions. Stop ends it.
func (h *Host) StartDelayTo(ctx context.Context, queue uint16, d time.Duration, peers ...netip.Addr) (*Delay, error) {
	dl := &Delay{h: h, queue: queue, d: d, peers: peers, stop: make(chan struct{}), fd: -1}
	err := h.Do(func() error {
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_NETFILTER)
		if err != nil {
			return err
		}
		dl.fd = fd
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("netns: delay on %s: netlink socket: %w", h.Name, err)
	}
	fail := func(err error) (*Delay, error) {
		unix.Close(dl.fd)
		return nil, fmt.Errorf("netns: delay on %s: %w", h.Name, err)
	}
	_ = unix.SetsockoptInt(dl.fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 16<<20)
	if err := unix.Bind(dl.fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fail(err)
	}
	// Reads wake up every 100 ms to see whether to stop.
	tv := unix.Timeval{Usec: 100_000}
	if err := unix.SetsockoptTimeval(dl.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return fail(err)
	}
	cmd := []byte{nfqnlCfgCmdBind, 0, 0, unix.AF_INET}
	params := make([]byte, 5)
	binary.BigEndian.PutUint32(params, 0xffff)
	params[4] = nfqnlCopyMeta
	maxlen := binary.BigEndian.AppendUint32(nil, 1<<16)
	flags := binary.BigEndian.AppendUint32(nil, nfqaCfgFFailOpen)
	msg := dl.msg(nfqnlMsgConfig, unix.AF_INET, unix.NLM_F_ACK,
		attr(nfqaCfgCmd, cmd), attr(nfqaCfgParams, params), attr(nfqaCfgQueueMax, maxlen),
		attr(nfqaCfgMask, flags), attr(nfqaCfgFlags, flags))
	if err := unix.Sendto(dl.fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fail(err)
	}
	if err := dl.ack(); err != nil {
		return fail(fmt.Errorf("bind queue %d: %w", queue, err))
	}
	if out, err := run(ctx, "ip", append([]string{"netns", "exec", h.NS, "iptables", "-w", "-A"}, dl.rule()...)...); err != nil {
		return fail(fmt.Errorf("iptables: %v: %s", err, out))
	}
	dl.wg.Add(1)
	go dl.loop()
	return dl, nil
}

// Stop removes the rule, lets every held packet go and closes the socket.
func (dl *Delay) Stop(ctx context.Context) error {
	var err error
	if out, rerr := run(ctx, "ip", append([]string{"netns", "exec", dl.h.NS, "iptables", "-w", "-D"}, dl.rule()...)...); rerr != nil {
		err = fmt.Errorf("netns: delay on %s: iptables: %v: %s", dl.h.Name, rerr, out)
	}
	close(dl.stop)
	dl.wg.Wait()
	unix.Close(dl.fd)
	return err
}

// rule is the iptables rule (after -A or -D) that queues what the host sends. The
// kernel may lack nftables' queue expression (CONFIG_NFT_QUEUE) but have xtables'
// NFQUEUE target, which iptables uses.
// With peers, -d lists them (iptables adds, and deletes, one rule per address).
func (dl *Delay) rule() []string {
	r := []string{"OUTPUT"}
	if len(dl.peers) > 0 {
		var ds []string
		for _, p := range dl.peers {
			ds = append(ds, p.String())
		}
		r = append(r, "-d", strings.Join(ds, ","))
	}
	return append(r, "-j", "NFQUEUE", "--queue-num", fmt.Sprint(dl.queue), "--queue-bypass")
}

func attr(typ uint16, data []byte) []byte {
	b := make([]byte, 4, 4+len(data)+3)
	binary.NativeEndian.PutUint16(b, uint16(4+len(data)))
	binary.NativeEndian.PutUint16(b[2:], typ)
	b = append(b, data...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func (dl *Delay) msg(typ uint16, family uint8, flags uint16, attrs ...[]byte) []byte {
	b := make([]byte, 16+4)
	binary.NativeEndian.PutUint16(b[4:], nfnlSubsysQueue<<8|typ)
	binary.NativeEndian.PutUint16(b[6:], unix.NLM_F_REQUEST|flags)
	b[16] = family
	b[17] = 0 // NFNETLINK_V0
	binary.BigEndian.PutUint16(b[18:], dl.queue)
	for _, a := range attrs {
		b = append(b, a...)
	}
	binary.NativeEndian.PutUint32(b, uint32(len(b)))
	return b
}

// ack reads the kernel's answer to a request sent with NLM_F_ACK.
func (dl *Delay) ack() error {
	buf := make([]byte, 8192)
	for range 50 {
		n, _, err := unix.Recvfrom(dl.fd, buf, 0)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		for b := buf[:n]; len(b) >= 16; {
			l := int(binary.NativeEndian.Uint32(b))
			if l < 16 || l > len(b) {
				break
			}
			if binary.NativeEndian.Uint16(b[4:]) == unix.NLMSG_ERROR && l >= 20 {
				if e := int32(binary.NativeEndian.Uint32(b[16:])); e != 0 {
					return unix.Errno(-e)
				}
				return nil
			}
			b = b[(l+3)&^3:]
		}
	}
	return errors.New("no answer from the kernel")
}

type held struct {
	id  uint32
	due time.Time
}

func (dl *Delay) loop() {
	defer dl.wg.Done()
	var mu sync.Mutex
	var fifo []held
	wake := make(chan struct{}, 1)
	done := make(chan struct{})
	// The verdict sender: accepts each packet when it is due.
	go func() {
		defer close(done)
		t := time.NewTimer(time.Hour)
		defer t.Stop()
		for {
			mu.Lock()
			now := time.Now()
			stopping := false
			select {
			case <-dl.stop:
				stopping = true
			default:
			}
			i := 0
			for i < len(fifo) && (stopping || !fifo[i].due.After(now)) {
				dl.verdict(fifo[i].id)
				i++
			}
			fifo = fifo[i:]
			var wait time.Duration = time.Hour
			if len(fifo) > 0 {
				wait = time.Until(fifo[0].due)
			}
			mu.Unlock()
			if stopping {
				return
			}
			t.Reset(max(wait, 0))
			select {
			case <-t.C:
			case <-wake:
			case <-dl.stop:
			}
		}
	}()
	buf := make([]byte, 1<<16)
	for {
		select {
		case <-dl.stop:
			<-done
			return
		default:
		}
		n, _, err := unix.Recvfrom(dl.fd, buf, 0)
		if err != nil {
			continue // timeout (to look at stop), ENOBUFS (the kernel dropped: fail-open)
		}
		now := time.Now()
		var ids []uint32
		for b := buf[:n]; len(b) >= 16; {
			l := int(binary.NativeEndian.Uint32(b))
			if l < 16 || l > len(b) {
				break
			}
			if binary.NativeEndian.Uint16(b[4:]) == nfnlSubsysQueue<<8|nfqnlMsgPacket && l >= 20 {
				for a := b[20:l]; len(a) >= 4; {
					al := int(binary.NativeEndian.Uint16(a))
					if al < 4 || al > len(a) {
						break
					}
					if binary.NativeEndian.Uint16(a[2:])&0x7fff == nfqaPacketHdr && al >= 8 {
						ids = append(ids, binary.BigEndian.Uint32(a[4:]))
					}
					a = a[(al+3)&^3:]
				}
			}
			b = b[(l+3)&^3:]
		}
		if len(ids) > 0 {
			mu.Lock()
			for _, id := range ids {
				fifo = append(fifo, held{id, now.Add(dl.d)})
			}
			mu.Unlock()
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	}
}

func (dl *Delay) verdict(id uint32) {
	v := make([]byte, 8)
	binary.BigEndian.PutUint32(v, nfAccept)
	binary.BigEndian.PutUint32(v[4:], id)
	_ = unix.Sendto(dl.fd, dl.msg(nfqnlMsgVerdict, unix.AF_UNSPEC, 0, attr(nfqaVerdictHdr, v)), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK})
}
