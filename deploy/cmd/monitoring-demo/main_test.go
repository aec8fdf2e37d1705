package main

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flurryid/flurry/deploy/internal/deploytest"
)

// TestDemo runs the demo as make monitoring-demo does, waits until its
// Prometheus reports the three flurry servers up through its HTTP API (and, with
// DEMO_FAULT=1, until the broken Redis lease's alert fires), then stops it with
// SIGINT, as Ctrl-C does, and checks that every process it printed has ended,
// every port it printed is closed and its directory is gone.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs Prometheus and three flurry servers for up to a minute; run: cd deploy && go test -run TestDemo ./cmd/monitoring-demo")
	}
	deploytest.Tool(t, "prometheus", "prometheus")
	dir := t.TempDir()
	flurry := deploytest.BuildFlurry(t, dir)
	demo := filepath.Join(dir, "monitoring-demo")
	if out, err := exec.Command("go", "build", "-o", demo, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Run("healthy", func(t *testing.T) { runDemo(t, demo, flurry, false) })
	t.Run("fault", func(t *testing.T) {
		deploytest.Tool(t, "redis-server", "redis-server")
		runDemo(t, demo, flurry, true)
	})
}

func runDemo(t *testing.T, demo, flurry string, fault bool) {
	env := []string{"FLURRY_BIN=" + flurry, "TMPDIR=" + t.TempDir()}
	if fault {
		env = append(env, "DEMO_FAULT=1")
	}
	p := deploytest.Start(t, "monitoring-demo", env, demo)
	out := waitLog(t, p, "  data: ", 2*time.Minute)

	prom := regexp.MustCompile(`Prometheus: +(http://\S+)/`).FindStringSubmatch(out)
	data := regexp.MustCompile(`data: +(\S+)`).FindStringSubmatch(out)
	if prom == nil || data == nil {
		t.Fatalf("the demo did not print Prometheus's URL and its directory:\n%s", out)
	}
	for _, want := range []string{"/alerts", "flurry-dashboard.json", "flurry server c:"} {
		if !strings.Contains(out, want) {
			t.Errorf("the demo's directions lack %q:\n%s", want, out)
		}
	}
	var pids []int
	for _, m := range regexp.MustCompile(`pid (\d+)`).FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(m[1])
		pids = append(pids, n)
	}
	addrs := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/`).FindAllStringSubmatch(out, -1)
	want := 4 // three servers and Prometheus
	if fault {
		want++ // and Redis
	}
	if len(pids) != want {
		t.Fatalf("the demo printed %d pids, want %d (three servers, Prometheus, Redis with DEMO_FAULT=1):\n%s", len(pids), want, out)
	}

	// Prometheus scrapes the three servers.
	waitProm(t, p, prom[1]+"/api/v1/targets", 60*time.Second, func(body []byte) bool {
		var v struct {
			Data struct {
				ActiveTargets []struct {
					Health string `json:"health"`
				} `json:"activeTargets"`
			} `json:"data"`
		}
		up := 0
		if json.Unmarshal(body, &v) == nil {
			for _, tg := range v.Data.ActiveTargets {
				if tg.Health == "up" {
					up++
				}
			}
		}
		return up == 3
	})
	if fault {
		waitLog(t, p, "fault: Redis stopped", FaultAfter+time.Minute)
		waitProm(t, p, prom[1]+"/api/v1/alerts", 60*time.Second, func(body []byte) bool {
			return strings.Contains(string(body), `"alertname":"FlurryLeaseRenewalsFailing"`) && strings.Contains(string(body), `"state":"firing"`)
		})
	}

	p.Signal(syscall.SIGINT)
	if err := p.Wait(t, time.Minute); err != nil {
		t.Fatalf("the demo exited with %v after SIGINT:\n%s", err, p.Log())
	}
	if !strings.Contains(p.Log(), "removed "+data[1]) {
		t.Errorf("the demo did not say it removed its directory:\n%s", p.Log())
	}
	if _, err := os.Stat(data[1]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the demo's directory %s is still there (%v)", data[1], err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d the demo started still runs (kill 0: %v)", pid, err)
		}
	}
	for _, a := range addrs {
		if c, err := net.DialTimeout("tcp", a[1], time.Second); err == nil {
			c.Close()
			t.Errorf("%s still accepts connections after the demo ended", a[1])
		}
	}
}

// waitLog waits up to d for the demo to print want, and returns its output.
func waitLog(t *testing.T, p *deploytest.Proc, want string, d time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(d)
	for !strings.Contains(p.Log(), want) {
		if p.Exited() || time.Now().After(deadline) {
			t.Fatalf("the demo did not print %q within %v:\n%s", want, d, p.Log())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return p.Log()
}

// waitProm polls a Prometheus API URL until ok accepts its answer, for up to d.
func waitProm(t *testing.T, p *deploytest.Proc, url string, d time.Duration, ok func([]byte) bool) {
	t.Helper()
	c := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(d)
	var last []byte
	for {
		if res, err := c.Get(url); err == nil {
			last, _ = io.ReadAll(io.LimitReader(res.Body, 1<<20))
			res.Body.Close()
			if ok(last) {
				return
			}
		}
		if p.Exited() || time.Now().After(deadline) {
			t.Fatalf("%s did not answer as wanted within %v; last answer %.600s\n%s", url, d, last, p.Log())
		}
		time.Sleep(500 * time.Millisecond)
	}
}
