# ragprecision — the two commands a newcomer needs:
#   make demo   build the collector, run it with the offline judge and demo traffic, show scores
#   make test   every check CI runs, the end-to-end test included
SHELL := /usr/bin/env bash
export PATH := $(PATH):/usr/local/go/bin

GO              ?= go
# The Collector Builder always compiles with CGO_ENABLED=0 and -trimpath,
# and both are part of every compiled package's key in the build cache: the
# Go commands here use them too (all but the race detector's, which needs
# cgo), so that a cold cache compiles the packages that go vet, the tests
# and tools share with the distribution and the router once, not twice.
export CGO_ENABLED ?= 0
export GOFLAGS := $(strip $(filter-out -trimpath,$(GOFLAGS)) -trimpath)
# The Go compiler and linker spend a tenth of their CPU collecting garbage
# at the default GOGC: the builds here (not the tests, nor what they start)
# run at BUILD_GOGC. The distribution on a cold cache: 374 CPU-seconds
# against 418, for some 80 MB more at the linker's peak.
BUILD_GOGC      ?= 400
BUILDER_VERSION := v0.161.0
BIN             := $(CURDIR)/bin
BUILDER         := $(BIN)/builder-$(BUILDER_VERSION)
COLLECTOR       := $(BIN)/otelcol-ragprecision
BUILD_DIR       := $(CURDIR)/build/otelcol-ragprecision

# FORCE: a prerequisite that makes a rule's recipe run every time.
.PHONY: FORCE all build demo validate test lint fmt vet generated unit unit-race unit-rest unit-timing e2e rules variant-tests canary-tests dashboard fuzz bench bench-short eval cascade-curve clean image router own-build

all: build

## build: the distribution at bin/otelcol-ragprecision, built by the OpenTelemetry
## Collector Builder at a pinned release from builder-config.yaml.
build: $(COLLECTOR)

$(BUILDER):
	@mkdir -p $(BIN)
	GOGC=$(BUILD_GOGC) GOBIN=$(BIN) $(GO) install go.opentelemetry.io/collector/cmd/builder@$(BUILDER_VERSION)
	mv $(BIN)/builder $(BUILDER)

## VERSION: what `otelcol-ragprecision --version` prints and the image's tag:
## scripts/version.sh (git describe; docs/RELEASING.md), computed once, when
## first needed; `make build VERSION=x.y.z` only from the command line.
ifneq ($(origin VERSION),command line)
VERSION = $(eval VERSION := $(shell $(CURDIR)/scripts/version.sh))$(VERSION)
endif
# builder-config.yaml with dist.version set to $(VERSION); rewritten only when
# that changes it, so that a new commit or tag rebuilds the binary, and
# nothing else does.
BUILD_MANIFEST := $(CURDIR)/build/builder-config.yaml
$(BUILD_MANIFEST): builder-config.yaml FORCE
	@[ -n "$(VERSION)" ] || { echo "no version (scripts/version.sh failed)" >&2; exit 1; }
	@mkdir -p $(@D)
	@sed 's/^  version: .*/  version: $(VERSION)/' builder-config.yaml >$@.tmp
	@grep -qx '  version: $(VERSION)' $@.tmp || { echo "builder-config.yaml has no dist.version line to stamp" >&2; exit 1; }
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; echo "version $(VERSION) in $@"; fi
FORCE:

# Rebuilt whenever the manifest, the version or any Go source of the module changes.
$(COLLECTOR): $(BUILDER) $(BUILD_MANIFEST) go.mod go.sum $(shell git ls-files '*.go' 2>/dev/null | grep -v _test.go)
	@mkdir -p $(BUILD_DIR)
	GOGC=$(BUILD_GOGC) $(BUILDER) --config $(BUILD_MANIFEST)
	cp $(BUILD_DIR)/otelcol-ragprecision $(COLLECTOR)

## router: bin/otelcol-router, the first tier of a scaled-out deployment: OTLP in,
## the loadbalancing exporter routing by trace ID to otelcol-ragprecision replicas
## (deploy/router/builder-config.yaml), by the same builder and at the same
## collector release as the distribution.
ROUTER                 := $(BIN)/otelcol-router
router: $(ROUTER)

$(ROUTER): $(BUILDER) deploy/router/builder-config.yaml
	GOGC=$(BUILD_GOGC) $(BUILDER) --config deploy/router/builder-config.yaml
	cp $(CURDIR)/build/otelcol-router/otelcol-router $(ROUTER)

## own-build: build examples/own-collector/builder-config.yaml, the minimal
## manifest of "Add ragprecision to your own collector" (OTLP in, ragprecision,
## debug out), from this checkout, and list its components.
# The builder creates only the last directory of output_path: build/ first.
own-build: $(BUILDER)
	@mkdir -p $(CURDIR)/build
	$(BUILDER) --config examples/own-collector/builder-config.yaml
	$(CURDIR)/build/otelcol-own/otelcol-own components

## image: the container image $(IMAGE) (Dockerfile), built by the first of
## buildah, podman or docker found, from the binary `make build` made (the
## Dockerfile's prebuilt target: no second compilation, no golang image to
## pull) and the CA certificates of this machine's ca-certificates package.
## `docker build .` alone builds the binary from source in a golang image instead.
## The tag is the version ($(VERSION)), with `_` for semver's `+`, which
## image tags do not allow (as Helm does for OCI tags).
IMAGE            ?= otelcol-ragprecision:$(subst +,_,$(VERSION))
CONTAINER_ENGINE ?= $(firstword $(foreach e,buildah podman docker,$(if $(shell command -v $(e) 2>/dev/null),$(e))))
# buildah keeps its images in vfs storage: it works inside containers and
# sandboxes where overlay mounts are refused. buildah bud leaves the image and
# working container of the intermediate runtime stage behind, and the image the
# tag named before loses its name: such untagged images of ours (by the title
# label) are removed after each build, unless a container uses them.
BUILDAH          ?= buildah --storage-driver vfs
# The CA certificates of Debian's (or Ubuntu's) ca-certificates package, as the
# package ships them: not /etc/ssl/certs/ca-certificates.crt, which also holds
# whatever CAs the build machine added locally (/usr/local/share/ca-certificates).
# Elsewhere, set CA_BUNDLE to a PEM bundle.
CA_CERTS_DIR     ?= /usr/share/ca-certificates/mozilla
CA_BUNDLE        ?=
IMAGE_ROOTFS     := $(CURDIR)/build/image/rootfs
image: $(COLLECTOR)
	@[ -n "$(CONTAINER_ENGINE)" ] || { echo "make image needs buildah, podman or docker (Debian: apt-get install buildah)" >&2; exit 1; }
	rm -rf $(IMAGE_ROOTFS) && mkdir -p $(IMAGE_ROOTFS)/etc/ssl/certs
	cp $(COLLECTOR) $(IMAGE_ROOTFS)/otelcol-ragprecision
	@if [ -n "$(CA_BUNDLE)" ]; then cp "$(CA_BUNDLE)" $(IMAGE_ROOTFS)/etc/ssl/certs/ca-certificates.crt; \
	elif ls $(CA_CERTS_DIR)/*.crt >/dev/null 2>&1; then cat $(CA_CERTS_DIR)/*.crt > $(IMAGE_ROOTFS)/etc/ssl/certs/ca-certificates.crt; \
	else echo "no CA certificates in $(CA_CERTS_DIR) (Debian: apt-get install ca-certificates); or set CA_BUNDLE to a PEM bundle" >&2; exit 1; fi
	@echo "CA bundle: $$(grep -c 'BEGIN CERTIFICATE' $(IMAGE_ROOTFS)/etc/ssl/certs/ca-certificates.crt) certificates"
	@case "$(CONTAINER_ENGINE)" in \
	  buildah) set -x; $(BUILDAH) bud --isolation chroot --target prebuilt --build-arg VERSION=$(VERSION) -t $(IMAGE) . && set +x && \
	    for id in $$($(BUILDAH) images -q --filter dangling=true --filter label=org.opencontainers.image.title=otelcol-ragprecision); do \
	      for c in $$($(BUILDAH) containers --format '{{.ContainerName}}' --filter ancestor=$$id | grep -- '-working-container$$'); do \
	        $(BUILDAH) rm $$c >/dev/null; \
	      done; \
	      $(BUILDAH) rmi $$id >/dev/null 2>&1 || true; \
	    done; $(BUILDAH) images $(IMAGE) ;; \
	  *) set -x; $(CONTAINER_ENGINE) build --target prebuilt --build-arg VERSION=$(VERSION) -t $(IMAGE) . && $(CONTAINER_ENGINE) images $(IMAGE) ;; \
	esac

## demo: run the collector, on free ports, with builtin:lexical and demo traffic, and
## print the scores. A collector you started yourself: `go run ./cmd/ragdemo` sends it the traffic.
demo: $(COLLECTOR)
	$(GO) run ./cmd/ragdemo -collector $(COLLECTOR) -config examples/demo.yaml $(ARGS)

## validate: check a collector config without starting it, e.g.
##   make validate CONFIG=examples/demo.yaml
## ARGS go to the collector, e.g. a feature gate the config needs:
##   make validate CONFIG=examples/health-check.yaml ARGS=--feature-gates=+extension.healthcheck.useComponentStatus
## The collector's own `validate` says nothing on success; this says which file
## is valid, or prints the problems and fails. ${env:...} in the file is read
## from your environment, as at start-up.
validate: $(COLLECTOR)
	@if [ -z "$(CONFIG)" ]; then echo "usage: make validate CONFIG=path/to/config.yaml" >&2; exit 2; fi; \
	status=0; \
	for c in $(CONFIG); do \
	  if out="$$($(COLLECTOR) validate --config "$$c" $(ARGS) 2>&1)"; then \
	    [ -z "$$out" ] || echo "$$out"; echo "$$c is valid"; \
	  else \
	    echo "$$out" >&2; echo "$$c is not valid" >&2; status=1; \
	  fi; \
	done; \
	exit $$status

## test: formatting, generated files, vet, unit tests with the race detector,
## the rules' unit tests, the end-to-end tests (Prometheus live, the image,
## scale-out included), and the short whole-distribution benchmark (ratios
## only, under a minute). The rules' unit tests run in `unit`
## (internal/promcheck's TestPromtoolUnitTests runs what `make rules` runs).
##
## Arranged to keep both cores busy on a cold build cache:
##  - the packages of the race detector's tests compile (at the lowest
##    priority) while the generated files are checked and the distribution
##    builds: they share no compiled package with anything else;
##  - the router builds in the background (nice 10) from then on, reusing
##    the packages it shares with the distribution;
##  - the race tests run, and beside them the other unit tests (nice 10: they
##    take what the race tests leave idle as these wait; the output of each
##    comes when it is done); neither hands ports to processes it starts;
##  - then the end-to-end tests run in the background (they mostly wait)
##    while go vet takes the idle CPU at the lowest priority; the end-to-end
##    output follows its. The ports they hand to the collectors and
##    Prometheus they start come from internal/testports, where no listen
##    on port 0 and no other test process can take them before the child
##    binds them (a collector then failed to start, or a test read another's);
##  - the scheduler's timing test and the benchmark run last, alone.
## go test's own vet checks are off (GOTEST_VET, exported to every make
## below): lint's go vet ./... runs all of them, and each go test would
## analyse every dependency again.
test: export GOTEST_VET = -vet=off
test:
	@$(start_race_compile); trap '$(stop_race_compile)' EXIT; \
	$(MAKE) --no-print-directory fmt generated $(COLLECTOR) || exit 1; \
	$(start_router_build); trap '$(stop_race_compile); $(stop_router_build); $(stop_e2e)' EXIT; \
	$(wait_race_compile); \
	$(MAKE) --no-print-directory -j2 --output-sync=target unit-race unit-rest UNIT_REST_NICE="nice -n 10" || exit 1; \
	$(start_e2e); \
	nice -n 19 $(MAKE) --no-print-directory vet; rest=$$?; \
	$(wait_e2e); [ $$rest = 0 ] && [ $$e2e = 0 ] || exit 1; \
	$(MAKE) --no-print-directory unit-timing bench-short

lint: fmt vet generated

fmt:
	@unformatted="$$(gofmt -l $$(git ls-files '*.go'))"; \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi

vet:
	GOGC=$(BUILD_GOGC) $(GO) vet ./...

# What go generate writes (mdatagen's code and docs, the metric tables) must
# be what is committed: it changes nothing, also on a dirty tree. (It
# rewrites the files, so it runs before the distribution builds: a later
# run would make make rebuild it.)
generated:
	@before="$$(git status --porcelain; git diff)"; GOGC=$(BUILD_GOGC) $(GO) generate ./... || exit 1; \
	  if [ "$$before" != "$$(git status --porcelain; git diff)" ]; then \
	    echo "go generate ./... changed files: commit what it generates"; git status --short; exit 1; fi

# go test's vet checks, e.g. -vet=off where go vet ./... runs anyway.
GOTEST_VET ?=

# The packages the race detector's tests import, compiled (not linked: go
# test links its binaries anyway) in the background at the lowest priority,
# for `make test`; unit-race reports any error (the log: RACE_COMPILE_LOG).
RACE_COMPILE_LOG := $(CURDIR)/build/race-compile.log
start_race_compile = mkdir -p $(CURDIR)/build; set -m; \
	{ CGO_ENABLED=1 GOGC=$(BUILD_GOGC) nice -n 19 $(GO) build -race $$($(GO) list -test -deps -f '{{if and (not .Standard) (ne .Name "main")}}{{.ImportPath}}{{end}}' $(RACE_PKGS) | grep -v ' ') >$(RACE_COMPILE_LOG) 2>&1; } & \
	race_compile=$$!; set +m
stop_race_compile = kill -- -$$race_compile 2>/dev/null || true
wait_race_compile = wait $$race_compile 2>/dev/null || true

# `make e2e` in the background, in a process group of its own, its output in
# E2E_LOG, shown when it is done.
E2E_LOG := $(CURDIR)/build/e2e.log
start_e2e = echo "make e2e: in the background, output in $(E2E_LOG) (shown when it is done)"; set -m; \
	{ $(MAKE_COMMAND) --no-print-directory e2e ROUTER_BUILD_STARTED=1 >$(E2E_LOG) 2>&1; } & \
	e2e_run=$$!; set +m
stop_e2e = kill -- -$$e2e_run 2>/dev/null || true
wait_e2e = wait $$e2e_run; e2e=$$?; echo "make e2e (in the background):"; cat $(E2E_LOG); \
	[ $$e2e = 0 ] || echo "make e2e failed" >&2

# The tests that run the built distribution: `e2e` runs them, `unit` leaves
# them out (with CI set they fail rather than skip without the binary).
E2E_TESTS := TestVersionFlag|TestEndToEnd|TestRecordedTraffic|TestNPMInstrumentations|TestExampleConfigsValidate|TestValidateReportsEveryProblem|TestDemo|TestJudgeOutageShowsInHealthCheck|TestHealthCheckDocsQuoteTheExample|TestPrometheus|TestImage|TestOwnCollectorBuild|TestBuilderAllowsMixedVersions|TestBuildsShareModuleVersions|TestScaleOut|TestKubernetesManifests|TestHelmValues|TestOperatorManifest|TestTailSamplingExample|TestShadowJudgeEndToEnd|TestAdaptiveSamplingEndToEnd

# The short benchmark of the whole distribution: `bench-short` runs it alone,
# so that no other test shares the cores it measures.
DIST_TESTS := TestDistributionShort

# The product's concurrent code, the processor and the judge, runs under the
# race detector. The configuration, scoring, the commands and internal
# packages (tools, test servers, span readers, checkers of docs and rules)
# run without it: the race detector compiles everything they import once
# more (cgo, instrumented), which on a cold cache costs minutes, and slows
# the promtool and sampling-comparison tests twofold; the processor's and
# the judge's own tests are what exercise their concurrency.
RACE_PKGS := ./processor/... ./judge/...
# A test of the scheduler's use of real time (how many spans the judge's
# slots score in max_wait) runs without the detector too, after the rest:
# under it, on a machine that is compiling, the first replies' latency,
# with which the scheduler sheds what cannot finish, is out of all
# proportion to the later ones.
UNRACED_TESTS := ^TestBurstIsJudgedSpanBySpan$$
# The lexical judge's comparison with its reference implementation on every
# HotpotQA retrieval runs in one goroutine: the race detector has nothing
# to find there and makes it ten times slower (13 s), so it runs in unit-rest.
RACE_FREE_TESTS := ^TestSameAsReferenceHotpotQA$$

unit: unit-race unit-rest unit-timing

unit-race:
	CGO_ENABLED=1 $(GO) test -race $(GOTEST_VET) -count=1 -skip "$(E2E_TESTS)|$(DIST_TESTS)|$(UNRACED_TESTS)|$(RACE_FREE_TESTS)" $(RACE_PKGS)

# The other unit tests' priority: `make test` runs them beside the race tests.
UNIT_REST_NICE ?=

unit-rest:
	$(UNIT_REST_NICE) $(GO) test $(GOTEST_VET) -count=1 -skip "$(E2E_TESTS)|$(DIST_TESTS)" ./config/... ./scoring/... ./cmd/... ./internal/...
	$(UNIT_REST_NICE) $(GO) test $(GOTEST_VET) -count=1 -run "$(RACE_FREE_TESTS)" ./judge/internal/lexical/

unit-timing:
	$(GO) test $(GOTEST_VET) -count=1 -run "$(UNRACED_TESTS)" ./processor/ragprecisionprocessor/

## e2e: build the distribution, run it against a local judge and check what comes
## out; validate every example config; run the demo as `make demo` does, and
## against a collector started by hand; show a judge outage on the health
## extension; run the alert rules and dashboard in a real Prometheus (the
## Debian package prometheus) scraping the collector, and the exemplar
## configuration; build the image (`make image`) and run the collector from
## it; build the minimal "own collector" manifest; run one router and two
## scoring replicas (bin/otelcol-router) and kill one; check the Kubernetes
## manifests.
##
## The tests run in parallel (they mostly wait); the router builds while those
## that need no router run, unless `make test` started its build already.
e2e: $(COLLECTOR) $(BUILDER)
	@if [ -z "$(ROUTER_BUILD_STARTED)" ]; then $(start_router_build); trap '$(stop_router_build)' EXIT; fi; \
	set -x; RAGPRECISION_COLLECTOR=$(COLLECTOR) RAGPRECISION_ROUTER=$(ROUTER) RAGPRECISION_BUILDER=$(BUILDER) \
	  RAGPRECISION_ROUTER_BUILD_STATUS=$(ROUTER_BUILD_STATUS) \
	  $(GO) test $(GOTEST_VET) -count=1 -v -timeout 20m -parallel 32 -run "$(E2E_TESTS)" ./internal/e2e/ ./cmd/ragdemo/; \
	{ tests=$$?; set +x; } 2>/dev/null; [ $$tests = 0 ] || { $(show_failed_router_build); exit $$tests; }; \
	$(wait_router_build)

# `make router` in the background, in a process group of its own (so that
# stop_router_build ends all of it), writing its exit status for the tests
# and for wait_router_build. MAKE_COMMAND, not MAKE: a line naming $(MAKE)
# runs even under `make -n`, and e2e's runs the tests.
ROUTER_BUILD_LOG    := $(CURDIR)/build/router-build.log
ROUTER_BUILD_STATUS := $(CURDIR)/build/router-build.status
start_router_build = mkdir -p $(CURDIR)/build; rm -f $(ROUTER_BUILD_STATUS); \
	echo "make router: in the background, output in $(ROUTER_BUILD_LOG)"; \
	set -m; { nice -n 10 $(MAKE_COMMAND) --no-print-directory router >$(ROUTER_BUILD_LOG) 2>&1; echo $$? >$(ROUTER_BUILD_STATUS); } & \
	router_build=$$!; set +m
stop_router_build = kill -- -$$router_build 2>/dev/null || true
wait_router_build = for i in $$(seq 900); do [ -s $(ROUTER_BUILD_STATUS) ] && break; sleep 1; done; \
	echo "make router (in the background):"; sed 's/^/  /' $(ROUTER_BUILD_LOG); \
	[ "$$(cat $(ROUTER_BUILD_STATUS) 2>/dev/null)" = 0 ] || { echo "make router failed, or did not finish within 15 minutes" >&2; exit 1; }
show_failed_router_build = if [ -s $(ROUTER_BUILD_STATUS) ] && [ "$$(cat $(ROUTER_BUILD_STATUS))" != 0 ]; then \
	echo "make router failed:"; sed 's/^/  /' $(ROUTER_BUILD_LOG); fi

## rules: check the Prometheus rules and run their unit tests with promtool:
## the hand-written ones, a day of two variants drawn from a seeded noise
## model (generated by `make variant-tests`), and ten days of the drift
## canary (generated by `make canary-tests`).
rules:
	promtool check config deploy/prometheus/prometheus.yml
	cd deploy/prometheus && promtool test rules ragprecision.rules.test.yml ragprecision.variants.test.yml ragprecision.canary.test.yml

## variant-tests: regenerate deploy/prometheus/ragprecision.variants.test.yml
## from cmd/ragprecision-variant-tests.
variant-tests:
	$(GO) run ./cmd/ragprecision-variant-tests -o deploy/prometheus/ragprecision.variants.test.yml

## canary-tests: regenerate deploy/prometheus/ragprecision.canary.test.yml
## from cmd/ragprecision-canary-tests.
canary-tests:
	$(GO) run ./cmd/ragprecision-canary-tests -o deploy/prometheus/ragprecision.canary.test.yml

## dashboard: regenerate deploy/grafana/ragprecision.json from cmd/ragprecision-dashboard.
dashboard:
	$(GO) run ./cmd/ragprecision-dashboard -o deploy/grafana/ragprecision.json

## fuzz: run every fuzz target for FUZZTIME (default 30s): each span reader (with
## its cost bound), the JSON scanner's cost and its agreement with encoding/json,
## and the lexical judge against its frozen reference.
FUZZTIME ?= 30s
SPANREADER := ./internal/spanreader/
fuzz:
	for t in FuzzProject FuzzGenAI FuzzOpenInference FuzzOpenLLMetry FuzzSpringAI FuzzAttributes FuzzJSONCost FuzzFindersAgainstLegacy; do \
	  $(GO) test -run XXX -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) $(SPANREADER) || exit 1; \
	done
	$(GO) test -run XXX -fuzz '^FuzzSameAsReference$$' -fuzztime $(FUZZTIME) ./judge/internal/lexical/

## bench: the microbenchmarks, each next to its baseline measured in the same run
## (pass-through vs a bare attribute walk, span readers, the lexical judge vs its
## frozen reference, the verdict cache vs a map lookup, judged throughput vs
## Little's law), then the whole distribution at saturation, pipelines with and
## without ragprecision in interleaved rounds; one report at the end, also in
## build/bench/report.md (docs/BENCHMARKS.md). ARGS go to ragprecision-bench,
## e.g. ARGS="-rounds 3 -pipelines a,d" or ARGS=-short.
BENCH_DIR := $(CURDIR)/build/bench
bench: $(COLLECTOR)
	@rm -rf $(BENCH_DIR) && mkdir -p $(BENCH_DIR)
	set -o pipefail; $(GO) test -p 1 -run '^$$' -bench . -benchmem \
	  ./processor/... ./internal/spanreader/ ./judge/internal/... ./scoring/ | tee $(BENCH_DIR)/micro.txt
	set -o pipefail; $(GO) test -run '^$$' -bench CacheHit -benchmem ./judge/ | tee -a $(BENCH_DIR)/micro.txt
	set -o pipefail; $(GO) test -run '^$$' -bench JudgedThroughput -benchtime 5s ./judge/ | tee -a $(BENCH_DIR)/micro.txt
	set -o pipefail; $(GO) run ./cmd/ragprecision-bench -collector $(COLLECTOR) -micro $(BENCH_DIR)/micro.txt \
	  -dir $(BENCH_DIR)/dist $(ARGS) | tee $(BENCH_DIR)/report.md

## bench-short: the whole distribution for a few seconds per pipeline, checking
## only loose ratios to the pipeline without ragprecision and that no span is
## lost (part of `make test`).
bench-short: $(COLLECTOR)
	RAGPRECISION_COLLECTOR=$(COLLECTOR) $(GO) test $(GOTEST_VET) -count=1 -v -run "$(DIST_TESTS)|TestConfigsValidate" ./internal/distbench/

## eval: agreement of a judge with human relevance labels: HotpotQA when
## ../shared/data/hotpotqa_dev500.jsonl (or $RAGPRECISION_HOTPOTQA) exists, else
## the small set in cmd/ragprecision-eval/testdata. ARGS: e.g. -single-chunk,
## -judge openai:gpt-4o-mini, -data my-set.jsonl (docs/EVAL_FORMAT.md).
eval:
	$(GO) run ./cmd/ragprecision-eval $(ARGS)

## cascade-curve: what a cascade (cascade:openai:oracle) saves and loses over
## judge.cascade.min_confidence, against a local LLM that answers from the labels:
## perfect, and wrong on 10% of chunks. Needs the HotpotQA file (see make eval).
CURVE_CONFIDENCES ?= 0.3 0.5 0.6 0.7 0.8 0.9
cascade-curve:
	@for e in 0 0.1; do \
	  echo "== LLM wrong on $$e of chunks"; \
	  $(GO) run ./cmd/ragprecision-eval -judge openai:oracle -oracle $$e -progress 0 $(ARGS) | grep -E '^ +all .*openai:oracle'; \
	  for c in $(CURVE_CONFIDENCES); do \
	    echo "-- min_confidence $$c"; \
	    $(GO) run ./cmd/ragprecision-eval -judge cascade:openai:oracle -oracle $$e -min-confidence $$c -progress 0 $(ARGS) \
	      | grep -E '^ +all .*cascade|deciding stage'; \
	  done; \
	done

clean:
	rm -rf $(BIN) build
