package testenv

import (
	"strings"
	"testing"
)

func TestChildEnv(t *testing.T) {
	t.Setenv("CGO_ENABLED", "1")
	t.Setenv(BuildEnvVar, "CGO_ENABLED=0  GOFLAGS=-trimpath")
	env, err := childEnv()
	if err != nil {
		t.Fatal(err)
	}
	if got := lookupEnv(env, "CGO_ENABLED"); got != "0" {
		t.Errorf("CGO_ENABLED in the build's environment: %q, want %s's 0 over the process's 1", got, BuildEnvVar)
	}
	if got := lookupEnv(env, "GOFLAGS"); got != "-trimpath" {
		t.Errorf("GOFLAGS in the build's environment: %q, want -trimpath", got)
	}

	for _, bad := range []string{"CGO_ENABLED", "HOME=/tmp", "=0"} {
		t.Setenv(BuildEnvVar, bad)
		_, err := childEnv()
		if err == nil || !strings.Contains(err.Error(), BuildEnvVar) || !strings.Contains(err.Error(), "CGO_ENABLED") {
			t.Errorf("%s=%q: %v, want an error naming the variable and the settings it takes", BuildEnvVar, bad, err)
		}
	}

	t.Setenv(BuildEnvVar, "")
	env, err = childEnv()
	if err != nil {
		t.Fatal(err)
	}
	if got := lookupEnv(env, "CGO_ENABLED"); got != "1" {
		t.Errorf("without %s, CGO_ENABLED: %q, want the process's own 1", BuildEnvVar, got)
	}
}
