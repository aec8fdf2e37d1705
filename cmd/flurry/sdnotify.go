package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
)

// notifySystemd tells systemd (a Type=notify unit) that serve is ready: READY=1
// now, and STOPPING=1 when ctx ends or when the returned stop is called, whichever
// comes first. It writes one datagram per message to the unixgram socket systemd
// names in NOTIFY_SOCKET (a path, or "@name" for the abstract namespace, which Go's
// net package maps), the whole sd_notify protocol serve needs; without
// NOTIFY_SOCKET it does nothing. A failed write is reported on stderr and is not
// fatal: the unit's start timeout tells the operator the rest.
func notifySystemd(ctx context.Context, stderr io.Writer) (stop func()) {
	sock := os.Getenv("NOTIFY_SOCKET")
	if sock == "" {
		return func() {}
	}
	send := func(state string) {
		if err := sdNotify(sock, state); err != nil {
			fmt.Fprintf(stderr, "flurry: systemd notify %q: %v\n", state, err)
		}
	}
	send("READY=1\nSTATUS=serving")
	var once sync.Once
	stopping := func() {
		once.Do(func() { send("STOPPING=1\nSTATUS=stopping: finishing requests, handing ranges back, releasing leases") })
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case <-ctx.Done():
			stopping()
		case <-done:
		}
	}()
	return func() {
		close(done)
		<-finished
		stopping()
	}
}

// sdNotify writes state to the unixgram socket at addr.
func sdNotify(addr, state string) error {
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte(state))
	return err
}
