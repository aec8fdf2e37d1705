// Package kubernetes holds flurry's Kubernetes manifests; this test decodes each
// one strictly into the k8s.io/api types (an unknown or misspelt field is an
// error, as `kubectl apply --validate=strict` would make it) and checks that the
// pieces fit together: selectors, ports, probes, the Secret and ConfigMap
// references, the grace period against the configured drain, resources.
// A separate module (deploy/go.mod), so the main module does not depend on k8s.io.
package kubernetes

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

type manifests struct {
	sts       []appsv1.StatefulSet
	svcs      []corev1.Service
	cms       []corev1.ConfigMap
	secrets   []corev1.Secret
	pdbs      []policyv1.PodDisruptionBudget
	resources []string // the kustomization's list
}

func strict(t *testing.T, file string, doc []byte, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(doc, into); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

func load(t *testing.T) *manifests {
	t.Helper()
	m := &manifests{}
	var kust struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Resources  []string `json:"resources"`
	}
	strict(t, "kustomization.yaml", mustRead(t, "kustomization.yaml"), &kust)
	m.resources = kust.Resources
	files, _ := filepath.Glob("*.yaml")
	listed := map[string]bool{"kustomization.yaml": true}
	for _, r := range kust.Resources {
		listed[r] = true
	}
	for _, f := range files {
		if !listed[f] {
			t.Errorf("%s is not in kustomization.yaml's resources", f)
		}
	}
	for _, f := range kust.Resources {
		for i, doc := range strings.Split(string(mustRead(t, f)), "\n---\n") {
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
				t.Fatalf("%s document %d: %v", f, i+1, err)
			}
			where := f + " " + tm.Kind
			switch tm.APIVersion + " " + tm.Kind {
			case "apps/v1 StatefulSet":
				var o appsv1.StatefulSet
				strict(t, where, []byte(doc), &o)
				m.sts = append(m.sts, o)
			case "v1 Service":
				var o corev1.Service
				strict(t, where, []byte(doc), &o)
				m.svcs = append(m.svcs, o)
			case "v1 ConfigMap":
				var o corev1.ConfigMap
				strict(t, where, []byte(doc), &o)
				m.cms = append(m.cms, o)
			case "v1 Secret":
				var o corev1.Secret
				strict(t, where, []byte(doc), &o)
				m.secrets = append(m.secrets, o)
			case "policy/v1 PodDisruptionBudget":
				var o policyv1.PodDisruptionBudget
				strict(t, where, []byte(doc), &o)
				m.pdbs = append(m.pdbs, o)
			default:
				t.Fatalf("%s document %d: unexpected %s %s", f, i+1, tm.APIVersion, tm.Kind)
			}
		}
	}
	if len(m.sts) != 1 || len(m.cms) != 1 || len(m.secrets) != 1 || len(m.pdbs) != 1 || len(m.svcs) != 2 {
		t.Fatalf("want 1 StatefulSet, 1 ConfigMap, 1 Secret, 1 PDB, 2 Services; got %d %d %d %d %d",
			len(m.sts), len(m.cms), len(m.secrets), len(m.pdbs), len(m.svcs))
	}
	return m
}

func mustRead(t *testing.T, f string) []byte {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestManifests(t *testing.T) {
	m := load(t)
	sts := m.sts[0]
	pod := sts.Spec.Template
	podLabels := labels.Set(pod.Labels)

	sel, err := metav1.LabelSelectorAsSelector(sts.Spec.Selector)
	if err != nil || !sel.Matches(podLabels) {
		t.Errorf("StatefulSet selector %v does not match its pods' labels %v (%v)", sts.Spec.Selector, pod.Labels, err)
	}
	if sts.Spec.Replicas == nil || *sts.Spec.Replicas < 2 {
		t.Errorf("replicas %v: want several", sts.Spec.Replicas)
	}

	// Services: one headless, named by serviceName; both select the pods and target
	// the container's named port.
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("want one container")
	}
	c := pod.Spec.Containers[0]
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	headless := false
	for _, s := range m.svcs {
		if !labels.SelectorFromSet(s.Spec.Selector).Matches(podLabels) || len(s.Spec.Selector) == 0 {
			t.Errorf("Service %s selects %v, not the pods %v", s.Name, s.Spec.Selector, pod.Labels)
		}
		for _, p := range s.Spec.Ports {
			if _, ok := ports[p.TargetPort.StrVal]; !ok {
				t.Errorf("Service %s port %s targets %q, which the container does not name", s.Name, p.Name, p.TargetPort.String())
			}
		}
		if s.Spec.ClusterIP == corev1.ClusterIPNone && s.Name == sts.Spec.ServiceName {
			headless = true
		}
	}
	if !headless {
		t.Errorf("no headless Service named %q (the StatefulSet's serviceName)", sts.Spec.ServiceName)
	}

	// PDB selects the pods and leaves room for a drain.
	pdb := m.pdbs[0]
	if ps, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err != nil || !ps.Matches(podLabels) {
		t.Errorf("PDB selector does not match the pods")
	}
	if pdb.Spec.MaxUnavailable == nil && pdb.Spec.MinAvailable == nil {
		t.Errorf("PDB sets neither maxUnavailable nor minAvailable")
	}

	// Probes on /healthz and /readyz, on the container's port.
	probe := func(name string, p *corev1.Probe, path string) {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("%s probe: want an HTTP GET of %s", name, path)
			return
		}
		if p.HTTPGet.Path != path || ports[p.HTTPGet.Port.StrVal] == 0 {
			t.Errorf("%s probe: GET %s on %q, want %s on a named container port", name, p.HTTPGet.Path, p.HTTPGet.Port.String(), path)
		}
	}
	probe("liveness", c.LivenessProbe, "/healthz")
	probe("readiness", c.ReadinessProbe, "/readyz")
	probe("startup", c.StartupProbe, "/healthz")

	// Hardening: non-root, read-only root, no privileges.
	psc, sc := pod.Spec.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Errorf("pod security context: want runAsNonRoot and a numeric non-root runAsUser")
	}
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("container security context: want readOnlyRootFilesystem, no privilege escalation, drop ALL")
	}

	// Resources from the measured RSS (46 MB, docs/server.md): a request above it, a
	// limit well above the request.
	req := c.Resources.Requests.Memory()
	lim := c.Resources.Limits.Memory()
	if req.Cmp(resource.MustParse("46M")) < 0 || lim.Cmp(*req) <= 0 || c.Resources.Requests.Cpu().IsZero() {
		t.Errorf("resources: requests %v memory %v cpu, limit %v: want memory request >= 46M (measured RSS) < limit, and a CPU request",
			req, c.Resources.Requests.Cpu(), lim)
	}

	// The Secret and ConfigMap references resolve.
	for _, e := range c.Env {
		if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil {
			s := m.secrets[0]
			_, inData := s.Data[r.SecretKeyRef.Key]
			_, inString := s.StringData[r.SecretKeyRef.Key]
			if r.SecretKeyRef.Name != s.Name || !(inData || inString) {
				t.Errorf("env %s refers to secret %s key %s, which is not in %s", e.Name, r.SecretKeyRef.Name, r.SecretKeyRef.Key, s.Name)
			}
		}
	}
	cm := m.cms[0]
	cfg, ok := cm.Data["flurry.yaml"]
	if !ok {
		t.Fatalf("ConfigMap %s has no flurry.yaml", cm.Name)
	}
	mounted := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name != cm.Name {
			t.Errorf("volume %s mounts ConfigMap %s, not %s", v.Name, v.ConfigMap.Name, cm.Name)
		}
		mounted[v.Name] = ""
	}
	for _, vm := range c.VolumeMounts {
		if _, ok := mounted[vm.Name]; !ok {
			t.Errorf("volume mount %s names no volume", vm.Name)
		}
		mounted[vm.Name] = vm.MountPath
	}
	if !strings.Contains(strings.Join(c.Args, " "), "--config "+mounted["config"]+"/flurry.yaml") {
		t.Errorf("args %v do not read the mounted ConfigMap at %s/flurry.yaml", c.Args, mounted["config"])
	}

	// The grace period covers the configured drain (shutdown_timeout) and the preStop
	// pause, with time left to hand ranges back and release leases.
	var conf struct {
		ShutdownTimeout string `json:"shutdown_timeout"`
		DataDir         string `json:"data_dir"`
		Access          struct {
			AdminTokenEnv []string `json:"admin_token_env"`
		} `json:"access"`
		Namespaces map[string]struct {
			TokenEnv []string `json:"token_env"`
		} `json:"namespaces"`
	}
	if err := yaml.Unmarshal([]byte(cfg), &conf); err != nil {
		t.Fatalf("flurry.yaml: %v", err)
	}
	drain, err := time.ParseDuration(conf.ShutdownTimeout)
	if err != nil {
		t.Fatalf("flurry.yaml shutdown_timeout: %v", err)
	}
	var preStop time.Duration
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
		preStop = time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	}
	grace := time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	if grace < drain+preStop+10*time.Second {
		t.Errorf("terminationGracePeriodSeconds %v: want at least shutdown_timeout %v + preStop %v + 10s", grace, drain, preStop)
	}
	if conf.DataDir != mounted["data"] {
		t.Errorf("data_dir %q is not the data volume's mount %q", conf.DataDir, mounted["data"])
	}
	envs := map[string]bool{}
	for _, e := range c.Env {
		envs[e.Name] = true
	}
	for _, v := range conf.Access.AdminTokenEnv {
		if !envs[v] {
			t.Errorf("access.admin_token_env names %s, which the container does not set", v)
		}
	}
	for name, ns := range conf.Namespaces {
		for _, v := range ns.TokenEnv {
			if !envs[v] {
				t.Errorf("namespace %s reads token_env %s, which the container does not set", name, v)
			}
		}
	}
}

// TestKustomize renders the directory with kubectl kustomize, which works offline
// (kubectl apply --dry-run=client does not: it asks the API server for its schema).
func TestKustomize(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skipf("kubectl not installed: %v", err)
	}
	out, err := exec.Command(kubectl, "kustomize", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl kustomize: %v\n%s", err, out)
	}
	if n := len(regexp.MustCompile(`(?m)^kind: `).FindAll(out, -1)); n != 6 {
		t.Errorf("kustomize rendered %d objects, want 6:\n%s", n, out)
	}
}
