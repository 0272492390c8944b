package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestKubernetesManifests checks deploy/kubernetes without a cluster: that
// every document parses, that the objects docs/DEPLOYING.md describes are there
// and refer to each other by the right names, labels and ports, that the
// probes ask the health_check extension, and that the configurations in
// the ConfigMaps are accepted by the `validate` subcommand of the binaries
// that run them (the router's by bin/otelcol-router, of the same release as
// the contrib image the Deployment names).

// k8sObject is one parsed document.
type k8sObject map[string]any

// get walks a path of map keys; a number indexes a list.
func (o k8sObject) get(path ...any) any {
	var cur any = map[string]any(o)
	for _, p := range path {
		switch key := p.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			cur = m[key]
		case int:
			l, ok := cur.([]any)
			if !ok || key >= len(l) {
				return nil
			}
			cur = l[key]
		}
	}
	return cur
}

func (o k8sObject) str(path ...any) string { s, _ := o.get(path...).(string); return s }

func (o k8sObject) id() string { return o.str("kind") + "/" + o.str("metadata", "name") }

func loadManifests(t *testing.T, dir string) map[string]k8sObject {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", dir, err)
	}
	objects := map[string]k8sObject{}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		for {
			// Into a plain map: yaml gives nested maps the type of the outer one.
			var doc map[string]any
			err := dec.Decode(&doc)
			o := k8sObject(doc)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if o == nil {
				continue
			}
			if o.str("apiVersion") == "" || o.str("kind") == "" || o.str("metadata", "name") == "" {
				t.Errorf("%s: a document without apiVersion, kind or name: %v", f, o)
			}
			if _, dup := objects[o.id()]; dup {
				t.Errorf("%s: %s defined twice", f, o.id())
			}
			objects[o.id()] = o
		}
	}
	return objects
}

// container is the first container of a workload's pod template.
func container(w k8sObject) k8sObject {
	c, _ := w.get("spec", "template", "spec", "containers", 0).(map[string]any)
	return k8sObject(c)
}

// containerPort resolves a port given by name or number.
func containerPort(c k8sObject, port any) int {
	if n, ok := port.(int); ok {
		return n
	}
	ports, _ := c.get("ports").([]any)
	for _, p := range ports {
		p := k8sObject(p.(map[string]any))
		if p.str("name") == port {
			n, _ := p.get("containerPort").(int)
			return n
		}
	}
	return 0
}

func sameLabels(selector, labels any) bool {
	sel, _ := selector.(map[string]any)
	lab, _ := labels.(map[string]any)
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if lab[k] != v {
			return false
		}
	}
	return true
}

func TestKubernetesManifests(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(repoRoot(t), "deploy", "kubernetes")
	objects := loadManifests(t, dir)
	need := func(id string) k8sObject {
		o, ok := objects[id]
		if !ok {
			t.Fatalf("%s missing from %s", id, dir)
		}
		return o
	}
	ns := need("Namespace/ragprecision").str("metadata", "name")
	for id, o := range objects {
		if o.str("kind") != "Namespace" && o.str("metadata", "namespace") != ns {
			t.Errorf("%s is in namespace %q, want %q", id, o.str("metadata", "namespace"), ns)
		}
	}

	// kustomization.yaml names every file.
	var kust struct{ Resources []string }
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &kust); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	for _, f := range files {
		if b := filepath.Base(f); b != "kustomization.yaml" && !slices.Contains(kust.Resources, b) {
			t.Errorf("kustomization.yaml does not list %s", b)
		}
	}

	scoring := need("StatefulSet/otelcol-ragprecision")
	headless := need("Service/" + scoring.str("spec", "serviceName"))
	router := need("Deployment/otelcol-router")
	routerSvc := need("Service/otelcol-router")

	// The headless Service lists the scoring pods by the StatefulSet's labels.
	if headless.str("spec", "clusterIP") != "None" {
		t.Errorf("%s is not headless (clusterIP %q): the resolver would see one virtual IP", headless.id(), headless.str("spec", "clusterIP"))
	}
	for _, w := range []k8sObject{scoring, router} {
		labels := w.get("spec", "template", "metadata", "labels")
		if !sameLabels(w.get("spec", "selector", "matchLabels"), labels) {
			t.Errorf("%s: selector does not match its pod labels", w.id())
		}
	}
	if !sameLabels(headless.get("spec", "selector"), scoring.get("spec", "template", "metadata", "labels")) {
		t.Errorf("%s does not select the scoring pods", headless.id())
	}
	if !sameLabels(routerSvc.get("spec", "selector"), router.get("spec", "template", "metadata", "labels")) {
		t.Errorf("%s does not select the router pods", routerSvc.id())
	}
	scoringC, routerC := container(scoring), container(router)
	if p := containerPort(scoringC, headless.get("spec", "ports", 0, "targetPort")); p != 4317 || headless.get("spec", "ports", 0, "port") != 4317 {
		t.Errorf("%s: port %v -> container port %d, want 4317 -> 4317", headless.id(), headless.get("spec", "ports", 0, "port"), p)
	}
	for i, want := range []int{4317, 4318} {
		if p := containerPort(routerC, routerSvc.get("spec", "ports", i, "targetPort")); p != want {
			t.Errorf("%s: port %d reaches container port %d", routerSvc.id(), want, p)
		}
	}

	// Probes ask health_check (port 13133, path /) of each container.
	for _, c := range []k8sObject{scoringC, routerC} {
		for _, probe := range []string{"livenessProbe", "readinessProbe"} {
			if port := containerPort(c, c.get(probe, "httpGet", "port")); port != 13133 || c.str(probe, "httpGet", "path") != "/" {
				t.Errorf("%s: %s asks port %d path %q, want the health_check extension (13133, /)", c.str("name"), probe, port, c.str(probe, "httpGet", "path"))
			}
		}
		if c.get("securityContext", "allowPrivilegeEscalation") != false || c.get("securityContext", "readOnlyRootFilesystem") != true {
			t.Errorf("%s: securityContext %v", c.str("name"), c.get("securityContext"))
		}
	}
	for _, w := range []k8sObject{scoring, router} {
		if w.get("spec", "template", "spec", "securityContext", "runAsNonRoot") != true {
			t.Errorf("%s: not runAsNonRoot", w.id())
		}
	}
	if img := scoringC.str("image"); !strings.HasPrefix(img, "otelcol-ragprecision:") {
		t.Errorf("scoring image %q", img)
	}

	// The router reads the scoring Service's EndpointSlices, with the right to.
	sa := router.str("spec", "template", "spec", "serviceAccountName")
	binding := need("RoleBinding/otelcol-router")
	if binding.str("subjects", 0, "name") != sa || binding.str("roleRef", "kind") != "Role" {
		t.Errorf("%s binds %q, the router runs as %q", binding.id(), binding.str("subjects", 0, "name"), sa)
	}
	need("ServiceAccount/" + sa)
	role := need("Role/" + binding.str("roleRef", "name"))
	rule := fmt.Sprint(role.get("rules"))
	for _, w := range []string{"discovery.k8s.io", "endpointslices", "get", "list", "watch"} {
		if !strings.Contains(rule, w) {
			t.Errorf("%s: rules %s lack %s", role.id(), rule, w)
		}
	}

	// Each workload's configuration: the ConfigMap it mounts, at the path
	// its --config names, accepted by the binary that runs it.
	routerConfig := checkMountedConfig(t, objects, router, routerBinary(t))
	checkMountedConfig(t, objects, scoring, collectorBinary(t))
	var rc struct {
		Exporters map[string]struct {
			RoutingKey string `yaml:"routing_key"`
			Resolver   struct {
				K8s struct {
					Service string
					Ports   []int
				}
			}
		}
	}
	if err := yaml.Unmarshal([]byte(routerConfig), &rc); err != nil {
		t.Fatal(err)
	}
	lb := rc.Exporters["load_balancing"]
	if lb.RoutingKey != "traceID" {
		t.Errorf("router routing_key %q, want traceID", lb.RoutingKey)
	}
	if want := headless.str("metadata", "name") + "." + ns; lb.Resolver.K8s.Service != want || !slices.Contains(lb.Resolver.K8s.Ports, 4317) {
		t.Errorf("router resolver k8s %+v, want service %s, port 4317", lb.Resolver.K8s, want)
	}
}

// checkMountedConfig finds the ConfigMap mounted where the container's
// --config points, validates it with bin (the container's literal env
// values set), and returns it.
func checkMountedConfig(t *testing.T, objects map[string]k8sObject, w k8sObject, bin string) string {
	t.Helper()
	c := container(w)
	var configPath string
	args, _ := c.get("args").([]any)
	for i, a := range args {
		s := fmt.Sprint(a)
		if strings.HasPrefix(s, "--config=") {
			configPath = strings.TrimPrefix(s, "--config=")
		} else if s == "--config" && i+1 < len(args) {
			configPath = fmt.Sprint(args[i+1])
		}
	}
	if configPath == "" {
		t.Fatalf("%s: no --config in %v", w.id(), args)
	}
	mounts, _ := c.get("volumeMounts").([]any)
	volumes, _ := w.get("spec", "template", "spec", "volumes").([]any)
	for _, m := range mounts {
		m := k8sObject(m.(map[string]any))
		if filepath.Dir(configPath) != m.str("mountPath") {
			continue
		}
		for _, v := range volumes {
			v := k8sObject(v.(map[string]any))
			if v.str("name") != m.str("name") {
				continue
			}
			cm, ok := objects["ConfigMap/"+v.str("configMap", "name")]
			if !ok {
				t.Fatalf("%s mounts ConfigMap %q, which is missing", w.id(), v.str("configMap", "name"))
			}
			config := cm.str("data", filepath.Base(configPath))
			if config == "" {
				t.Fatalf("%s has no key %s", cm.id(), filepath.Base(configPath))
			}
			path := writeFile(t, t.TempDir(), "config.yaml", config)
			cmd := exec.Command(bin, "validate", "--config", path)
			cmd.Env = os.Environ()
			env, _ := c.get("env").([]any)
			for _, e := range env {
				e := k8sObject(e.(map[string]any))
				if v, ok := e.get("value").(string); ok {
					cmd.Env = append(cmd.Env, e.str("name")+"="+v)
				}
			}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s (%s) does not validate with %s: %v\n%s", cm.id(), w.id(), filepath.Base(bin), err, out)
			}
			return config
		}
	}
	t.Fatalf("%s: nothing mounted at %s", w.id(), filepath.Dir(configPath))
	return ""
}
