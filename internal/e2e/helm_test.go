package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ragprecision/ragprecision/internal/jsonschema"
)

// The tests of deploy/helm/values.yaml (the opentelemetry-collector Helm
// chart) and deploy/operator (the OpenTelemetry Operator's
// OpenTelemetryCollector). Neither helm nor a cluster runs here: the values
// are checked against the chart's own values.schema.json (what helm checks
// before it renders), the OpenTelemetryCollector against the CRD's schema,
// the configuration in each is accepted by the built binary's `validate`,
// and the fields the chart and the Operator turn into the container, its
// ports, probes and ServiceMonitors are checked against that configuration
// (deploy/helm/README.md, deploy/operator/README.md).

// helmChart is the chart release the values are written for; its schema is
// test data.
const helmChart = "opentelemetry-collector-0.130.1"

// readYAML decodes one YAML document into a plain map.
func readYAML(t *testing.T, path string) k8sObject {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}

// TestHelmChartSchema: helm refuses values that break the
// chart's values.schema.json (a misspelt key, a port given as a name where
// the chart wants a number) before rendering anything.
func TestHelmChartSchema(t *testing.T) {
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "internal", "e2e", "testdata", "helm", helmChart, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	schema, err := jsonschema.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	values := readYAML(t, filepath.Join(root, "deploy", "helm", "values.yaml"))
	for _, p := range schema.Validate(map[string]any(values)) {
		t.Errorf("deploy/helm/values.yaml breaks the schema of %s: %s", helmChart, p)
	}
}

// TestHelmValues checks what the chart makes of deploy/helm/values.yaml:
// the container runs this image's binary; the collector configuration
// (alternateConfig, which replaces the chart's own) validates; the
// Service's ports are those the configuration listens on, the product
// metrics endpoint among them; the ServiceMonitor scrapes both metrics
// endpoints; the probes ask the plain health_check extension.
func TestHelmValues(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	v := readYAML(t, filepath.Join(root, "deploy", "helm", "values.yaml"))

	if m := v.str("mode"); m != "deployment" && m != "statefulset" {
		t.Errorf("mode %q", m)
	}
	checkImage(t, root, v.str("image", "repository")+":"+v.str("image", "tag"))
	// The chart's container runs "/" + command.name, with --config=/conf/relay.yaml.
	if c := v.str("command", "name"); "/"+c != imageEntrypoint(t, root) {
		t.Errorf("command.name %q: the image's binary is %s", c, imageEntrypoint(t, root))
	}

	// The chart passes the configuration through `tpl`.
	config := v.get("alternateConfig")
	out, err := yaml.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "{{") {
		t.Errorf("alternateConfig holds {{: the chart's tpl would evaluate it")
	}
	cfg := checkDeployedConfig(t, "deploy/helm/values.yaml", config, envList(v.get("extraEnvs")))

	// Ports: the Service and the container get every enabled one.
	ports := map[string]int{}
	portsMap, _ := v.get("ports").(map[string]any)
	for name, p := range portsMap {
		p := k8sObject(p.(map[string]any))
		if p.get("enabled") != true {
			continue
		}
		cp, _ := p.get("containerPort").(int)
		ports[name] = cp
		if !slices.Contains(cfg.listens, cp) {
			t.Errorf("port %s (%d) is open, but the configuration listens on %v only", name, cp, cfg.listens)
		}
	}
	for _, want := range []struct {
		name string
		port int
	}{{"metrics", cfg.telemetryPort}, {"product-metrics", cfg.productPort}, {"otlp", 4317}} {
		if ports[want.name] != want.port {
			t.Errorf("port %s is %d, want %d (enabled)", want.name, ports[want.name], want.port)
		}
	}
	// The ServiceMonitor's endpoints name Service ports: both metrics endpoints.
	if v.get("serviceMonitor", "enabled") != true {
		t.Error("serviceMonitor is not enabled")
	}
	var scraped []string
	eps, _ := v.get("serviceMonitor", "metricsEndpoints").([]any)
	for _, e := range eps {
		name := k8sObject(e.(map[string]any)).str("port")
		if _, ok := ports[name]; !ok {
			t.Errorf("serviceMonitor scrapes port %q, which is not open", name)
		}
		scraped = append(scraped, name)
	}
	for _, want := range []string{"metrics", "product-metrics"} {
		if !slices.Contains(scraped, want) {
			t.Errorf("serviceMonitor does not scrape %s (it scrapes %v)", want, scraped)
		}
	}
	// Probes: the plain health_check.
	for _, probe := range []string{"livenessProbe", "readinessProbe"} {
		port, _ := v.get(probe, "httpGet", "port").(int)
		if port != cfg.healthPort || v.str(probe, "httpGet", "path") != cfg.healthPath {
			t.Errorf("%s asks port %d path %q, want health_check's %d %q", probe, port, v.str(probe, "httpGet", "path"), cfg.healthPort, cfg.healthPath)
		}
	}
	checkSecurity(t, "deploy/helm/values.yaml", v.get("podSecurityContext"), v.get("securityContext"))
	if v.str("resources", "limits", "memory") == "" {
		t.Error("no memory limit: memory_limiter's limit_percentage and GOMEMLIMIT need one")
	}
}

// TestOperatorManifest checks deploy/operator: the OpenTelemetryCollector
// conforms to the CRD's schema (testdata/operator), runs this image with a
// configuration that validates, exposes the product
// metrics port (the Operator adds OTLP's and the telemetry port from the
// configuration itself), asks for the ServiceMonitor of the collector's own
// metrics, and the second document's ServiceMonitor selects the Operator's
// base Service and scrapes the product metrics port.
func TestOperatorManifest(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	objects := loadManifests(t, filepath.Join(root, "deploy", "operator"))
	var col, sm k8sObject
	for _, o := range objects {
		switch o.str("kind") {
		case "OpenTelemetryCollector":
			col = o
		case "ServiceMonitor":
			sm = o
		default:
			t.Errorf("unexpected %s", o.id())
		}
	}
	if col == nil || sm == nil {
		t.Fatalf("want an OpenTelemetryCollector and a ServiceMonitor, got %d objects", len(objects))
	}
	if col.str("apiVersion") != "opentelemetry.io/v1beta1" {
		t.Errorf("%s: apiVersion %q: v1beta1 takes the configuration as YAML, not a string", col.id(), col.str("apiVersion"))
	}
	// The schema the Kubernetes API server checks it against: the CRD's.
	crd := readYAML(t, filepath.Join(root, "internal", "e2e", "testdata", "operator", "opentelemetrycollector-v1beta1.schema.yaml"))
	for _, p := range jsonschema.FromMap(crd).Validate(map[string]any(col)) {
		t.Errorf("%s breaks the OpenTelemetryCollector v1beta1 schema: %s", col.id(), p)
	}
	if m := col.str("spec", "mode"); m != "deployment" && m != "statefulset" {
		t.Errorf("spec.mode %q", m)
	}
	// The Operator sets only args (--config=/conf/collector.yaml): the
	// image's ENTRYPOINT runs.
	checkImage(t, root, col.str("spec", "image"))
	if col.get("spec", "args") != nil {
		t.Errorf("spec.args %v", col.get("spec", "args"))
	}
	cfg := checkDeployedConfig(t, "deploy/operator", col.get("spec", "config"), envList(col.get("spec", "env")))

	specPorts := map[string]int{}
	ps, _ := col.get("spec", "ports").([]any)
	for _, p := range ps {
		p := k8sObject(p.(map[string]any))
		n, _ := p.get("port").(int)
		specPorts[p.str("name")] = n
	}
	if specPorts["product-metrics"] != cfg.productPort {
		t.Errorf("spec.ports product-metrics is %d, want product_metrics.endpoint's %d", specPorts["product-metrics"], cfg.productPort)
	}
	if col.get("spec", "observability", "metrics", "enableMetrics") != true {
		t.Error("spec.observability.metrics.enableMetrics is not true: no ServiceMonitor for the collector's own metrics")
	}
	checkSecurity(t, col.id(), col.get("spec", "podSecurityContext"), col.get("spec", "securityContext"))
	if col.str("spec", "resources", "limits", "memory") == "" {
		t.Error("no memory limit")
	}

	// The Operator names the Deployment and Services <name>-collector and
	// labels the base Service (not the headless one, which has the same
	// ports) collector-service-type: base.
	sel, _ := sm.get("spec", "selector", "matchLabels").(map[string]any)
	if sel["app.kubernetes.io/name"] != col.str("metadata", "name")+"-collector" || sel["operator.opentelemetry.io/collector-service-type"] != "base" {
		t.Errorf("%s selects %v, want the base Service of %s", sm.id(), sel, col.id())
	}
	eps, _ := sm.get("spec", "endpoints").([]any)
	if len(eps) != 1 || k8sObject(eps[0].(map[string]any)).str("port") != "product-metrics" {
		t.Errorf("%s endpoints %v, want the port product-metrics", sm.id(), eps)
	}
}

// deployedConfig is what the checks of a deployment need from its
// collector configuration.
type deployedConfig struct {
	listens                    []int // every port a receiver, extension or endpoint opens
	telemetryPort, productPort int
	healthPort                 int
	healthPath                 string
}

// checkDeployedConfig validates a collector configuration with the built
// binary (env: the literal environment the deployment sets), also with the
// LLM judge its comments describe, and checks its shape: ragprecision in the
// traces pipeline after memory_limiter and before batch, the product
// metrics endpoint, the telemetry endpoint, and a plain health_check.
func checkDeployedConfig(t *testing.T, where string, config any, env []string) deployedConfig {
	t.Helper()
	out, err := yaml.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	path := writeFile(t, t.TempDir(), "config.yaml", string(out))
	for _, extra := range [][]string{nil, {"RAGPRECISION_JUDGE_MODEL=openai:gpt-4o-mini", "OPENAI_API_KEY=sk-test"}} {
		cmd := exec.Command(collectorBinary(t), "validate", "--config", path)
		cmd.Env = append(append(os.Environ(), env...), extra...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: the configuration does not validate (env %v): %v\n%s", where, extra, err, out)
		}
	}

	c := k8sObject(config.(map[string]any))
	var d deployedConfig
	port := func(endpoint, what string) int {
		_, p, err := net.SplitHostPort(endpoint)
		n, err2 := strconv.Atoi(p)
		if err != nil || err2 != nil {
			t.Errorf("%s: %s endpoint %q", where, what, endpoint)
		}
		d.listens = append(d.listens, n)
		return n
	}
	for _, proto := range []string{"grpc", "http"} {
		if e := c.str("receivers", "otlp", "protocols", proto, "endpoint"); e != "" {
			port(e, "otlp "+proto)
		}
	}
	procs := fmt.Sprint(c.get("service", "pipelines", "traces", "processors"))
	if !regexp.MustCompile(`^\[memory_limiter .*\bragprecision\b.* batch\]$`).MatchString(procs) {
		t.Errorf("%s: traces processors %s, want memory_limiter first, ragprecision, batch last", where, procs)
	}
	d.productPort = port(c.str("processors", "ragprecision", "product_metrics", "endpoint"), "product_metrics")
	d.telemetryPort, _ = c.get("service", "telemetry", "metrics", "readers", 0, "pull", "exporter", "prometheus", "port").(int)
	d.listens = append(d.listens, d.telemetryPort)

	// The probes' extension: health_check itself, without component
	// status (which answers 500 while the judge is down), and the only one.
	exts := fmt.Sprint(c.get("service", "extensions"))
	if exts != "[health_check]" {
		t.Errorf("%s: service.extensions %s, want [health_check] alone", where, exts)
	}
	hc, _ := c.get("extensions", "health_check").(map[string]any)
	for _, k := range []string{"component_health", "http", "check_collector_pipeline"} {
		if _, ok := hc[k]; ok {
			t.Errorf("%s: health_check has %s: probes on it would fail while the judge is down", where, k)
		}
	}
	d.healthPort = port(k8sObject(hc).str("endpoint"), "health_check")
	d.healthPath = "/"
	if p := k8sObject(hc).str("path"); p != "" {
		d.healthPath = p
	}
	return d
}

// envList is the literal name=value pairs of a container's env list (not
// those from Secrets or fields).
func envList(env any) []string {
	var out []string
	list, _ := env.([]any)
	for _, e := range list {
		e := k8sObject(e.(map[string]any))
		if v, ok := e.get("value").(string); ok {
			out = append(out, e.str("name")+"="+v)
		}
	}
	return out
}

// imageEntrypoint is the binary the Dockerfile's image runs.
func imageEntrypoint(t *testing.T, root string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ENTRYPOINT \["([^"]+)"\]`).FindSubmatch(raw)
	if m == nil {
		t.Fatal("no ENTRYPOINT in the Dockerfile")
	}
	return string(m[1])
}

// checkImage: `make image`'s repository name, and a release's tag in the form
// scripts/version.sh gives it, the one deploy/kubernetes names too.
func checkImage(t *testing.T, root, image string) {
	t.Helper()
	repo, tag, _ := strings.Cut(image, ":")
	if filepath.Base(repo) != "otelcol-ragprecision" {
		t.Errorf("image %q is not otelcol-ragprecision", image)
	}
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(tag) {
		t.Errorf("image %q: the tag is not a release's version (X.Y.Z)", image)
	}
	var kust struct {
		Images []struct {
			Name   string `yaml:"name"`
			NewTag string `yaml:"newTag"`
		} `yaml:"images"`
	}
	raw, err := os.ReadFile(filepath.Join(root, "deploy", "kubernetes", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &kust); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, i := range kust.Images {
		if i.Name == "otelcol-ragprecision" {
			found = true
			if i.NewTag != tag {
				t.Errorf("image %q, but deploy/kubernetes runs %s", image, i.NewTag)
			}
		}
	}
	if !found {
		t.Error("deploy/kubernetes/kustomization.yaml names no otelcol-ragprecision image")
	}
}

// checkSecurity: as deploy/kubernetes runs the collector.
func checkSecurity(t *testing.T, where string, pod, container any) {
	t.Helper()
	p, _ := pod.(map[string]any)
	c, _ := container.(map[string]any)
	if p["runAsNonRoot"] != true || p["runAsUser"] != 10001 {
		t.Errorf("%s: pod securityContext %v, want runAsNonRoot as uid 10001", where, p)
	}
	if c["allowPrivilegeEscalation"] != false || c["readOnlyRootFilesystem"] != true || fmt.Sprint(k8sObject(c).get("capabilities", "drop")) != "[ALL]" {
		t.Errorf("%s: container securityContext %v", where, c)
	}
}
