package bound

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStartWithoutDeadline(t *testing.T) {
	c := Call{Store: "etcd store etcd://h:1/x", Timeout: 20 * time.Millisecond, Hint: "is etcd running there?"}
	err := func() (err error) {
		ctx, end := c.Start(context.Background())
		defer end(&err)
		if _, ok := ctx.Deadline(); !ok {
			t.Fatal("no deadline added")
		}
		<-ctx.Done()
		return fmt.Errorf("lease/etcdstore: list x: %w", ctx.Err())
	}()
	var na *NoAnswerError
	if !errors.As(err, &na) || !errors.Is(err, ErrNoAnswer) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v (%T)", err, err)
	}
	if got, want := err.Error(), "etcd store etcd://h:1/x: no answer within 20ms (is etcd running there?)"; got != want {
		t.Errorf("message %q; want %q", got, want)
	}
	if !strings.Contains(errors.Unwrap(err).Error(), "lease/etcdstore: list x") {
		t.Errorf("the engine's error is not kept: %v", errors.Unwrap(err))
	}
}

func TestStartKeepsCallersDeadline(t *testing.T) {
	parent, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	ctx, end := Call{Timeout: time.Millisecond}.Start(parent)
	d1, _ := parent.Deadline()
	if d2, _ := ctx.Deadline(); !d2.Equal(d1) {
		t.Errorf("deadline %v; want the caller's %v", d2, d1)
	}
	err := errors.New("boom")
	end(&err)
	if err.Error() != "boom" {
		t.Errorf("an error before the deadline was changed: %v", err)
	}
}

func TestStartCancelledAndNoBound(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	ctx, end := Call{}.Start(parent)
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > DefaultTimeout {
		t.Errorf("zero Call: deadline %v, %v; want DefaultTimeout", d, ok)
	}
	cancel()
	err := ctx.Err()
	end(&err)
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrNoAnswer) {
		t.Errorf("a cancelled call: %v", err)
	}
	ctx, end = Call{Timeout: -1}.Start(context.Background())
	if _, ok := ctx.Deadline(); ok {
		t.Error("negative Timeout added a deadline")
	}
	var nilErr error
	end(&nilErr)
	if nilErr != nil {
		t.Errorf("a nil error became %v", nilErr)
	}
}

func TestDialCapsDeadline(t *testing.T) {
	parent, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	ctx, end := Call{Store: "redis store redis://h:1/0"}.Dial(parent, 10*time.Millisecond)
	<-ctx.Done()
	err := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	var e error = err
	end(&e)
	if !errors.Is(e, ErrNoAnswer) || !strings.HasSuffix(e.Error(), "no answer within 10ms; last error: connect: connection refused") {
		t.Errorf("dial error %v", e)
	}
}
