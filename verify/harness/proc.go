package harness

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/flurryid/flurry/verify/netns"
)

// Proc is one program run inside a host's namespace: a store server, a flurry node or
// a client. It can be started again after it stopped (a restart keeps its data).
type Proc struct {
	Name string
	Host *netns.Host
	Args []string // program and arguments
	Env  []string // added to the harness's environment
	Log  string   // stdout and stderr are appended here
	// Stamp prefixes each line of the program's output with the time it was read
	// (RFC 3339, UTC, nanoseconds), so that a log can be laid beside the ops.
	Stamp bool

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
	paused  bool
	starts  int
	started time.Time
}

// Start starts the program; it is an error while it runs.
func (p *Proc) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && !p.exited() {
		return fmt.Errorf("%s is already running", p.Name)
	}
	f, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "---- harness: start %s at %s: %v\n", p.Name, time.Now().UTC().Format(time.RFC3339Nano), p.Args)
	cmd := exec.Command("ip", append([]string{"netns", "exec", p.Host.NS}, p.Args...)...)
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.Stdout, cmd.Stderr = f, f
	if p.Stamp {
		// One writer for both: exec then copies both through one pipe, one
		// Write at a time.
		sw := &stampWriter{w: f}
		cmd.Stdout, cmd.Stderr = sw, sw
	}
	// Dies with the harness even when the harness is killed (ip netns exec keeps the
	// setting across its exec of the program).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	started := time.Now()
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	p.started = started
	done := make(chan struct{})
	p.cmd, p.done, p.paused, p.waitErr = cmd, done, false, nil
	p.starts++
	go func() {
		err := cmd.Wait()
		f.Close()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

// StartedAt is when the program was last started (just before its exec).
func (p *Proc) StartedAt() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started
}

// stampWriter writes each line it is given after the time it came.
type stampWriter struct {
	w       io.Writer
	midLine bool
	buf     []byte
}

// StampFormat is the layout of the times Proc.Stamp puts before log lines.
const StampFormat = "2006-01-02T15:04:05.000000000Z07:00"

func (s *stampWriter) Write(b []byte) (int, error) {
	s.buf = s.buf[:0]
	now := time.Now().UTC()
	for rest := b; len(rest) > 0; {
		if !s.midLine {
			s.buf = now.AppendFormat(s.buf, StampFormat)
			s.buf = append(s.buf, ' ')
		}
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			s.buf = append(s.buf, rest...)
			s.midLine = true
			break
		}
		s.buf = append(s.buf, rest[:i+1]...)
		s.midLine = false
		rest = rest[i+1:]
	}
	if _, err := s.w.Write(s.buf); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (p *Proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Running reports whether the program runs (a paused one does).
func (p *Proc) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil && !p.exited()
}

// Pid is the program's process id, 0 when it does not run.
func (p *Proc) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.exited() {
		return 0
	}
	return p.cmd.Process.Pid
}

// Signal sends sig to the running program.
func (p *Proc) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.exited() {
		return fmt.Errorf("%s does not run", p.Name)
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signal %s: %w", p.Name, err)
	}
	switch sig {
	case syscall.SIGSTOP:
		p.paused = true
	case syscall.SIGCONT:
		p.paused = false
	}
	return nil
}

// Wait waits up to d for the program to exit; it reports whether it did.
func (p *Proc) Wait(d time.Duration) bool {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done == nil {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// Stop sends SIGTERM (after SIGCONT if paused) and waits up to grace for the
// program to exit, then SIGKILLs it. Stopping a program that does not run is a no-op.
func (p *Proc) Stop(grace time.Duration) error {
	if !p.Running() {
		return nil
	}
	p.mu.Lock()
	paused := p.paused
	p.mu.Unlock()
	if paused {
		_ = p.Signal(syscall.SIGCONT)
	}
	_ = p.Signal(syscall.SIGTERM)
	if p.Wait(grace) {
		return nil
	}
	return p.Kill()
}

// Kill SIGKILLs the program and waits for it to be gone.
func (p *Proc) Kill() error {
	if !p.Running() {
		return nil
	}
	_ = p.Signal(syscall.SIGKILL)
	if !p.Wait(10 * time.Second) {
		return fmt.Errorf("%s survived SIGKILL for 10s", p.Name)
	}
	return nil
}

// ExitErr is how the last run ended (nil: exit status 0 or still running).
func (p *Proc) ExitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) && ee.Exited() && ee.ExitCode() == 0 {
		return nil
	}
	return p.waitErr
}

// procs is a set of programs to stop together.
type procs struct {
	mu   sync.Mutex
	list []*Proc
}

func (s *procs) add(p *Proc) *Proc {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list = append(s.list, p)
	return p
}

// killAll SIGKILLs every program, newest first.
func (s *procs) killAll() error {
	s.mu.Lock()
	l := slices.Clone(s.list)
	s.mu.Unlock()
	slices.Reverse(l)
	var errs []error
	for _, p := range l {
		if err := p.Kill(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
