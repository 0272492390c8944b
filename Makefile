# ragprecision — the two commands a newcomer needs:
#   make demo   build the collector, run it with the offline judge and demo traffic, show scores
#   make test   every check CI runs, the end-to-end test included
SHELL := /usr/bin/env bash
export PATH := $(PATH):/usr/local/go/bin

GO              ?= go
BUILDER_VERSION := v0.161.0
BIN             := $(CURDIR)/bin
BUILDER         := $(BIN)/builder-$(BUILDER_VERSION)
COLLECTOR       := $(BIN)/otelcol-ragprecision
BUILD_DIR       := $(CURDIR)/build/otelcol-ragprecision

.PHONY: all build demo test lint unit e2e rules dashboard fuzz bench eval clean

all: build

## build: the distribution at bin/otelcol-ragprecision, built by the OpenTelemetry
## Collector Builder at a pinned release from builder-config.yaml.
build: $(COLLECTOR)

$(BUILDER):
	@mkdir -p $(BIN)
	GOBIN=$(BIN) $(GO) install go.opentelemetry.io/collector/cmd/builder@$(BUILDER_VERSION)
	mv $(BIN)/builder $(BUILDER)

# Rebuilt whenever the manifest or any Go source of the module changes.
$(COLLECTOR): $(BUILDER) builder-config.yaml go.mod go.sum $(shell git ls-files '*.go' 2>/dev/null | grep -v _test.go)
	@mkdir -p $(BUILD_DIR)
	$(BUILDER) --config builder-config.yaml
	cp $(BUILD_DIR)/otelcol-ragprecision $(COLLECTOR)

## demo: run the collector with builtin:lexical and demo traffic, and print the scores.
demo: $(COLLECTOR)
	$(GO) run ./cmd/ragdemo -collector $(COLLECTOR) -config examples/demo.yaml $(ARGS)

## test: formatting, vet, unit tests with the race detector, the rules' unit
## tests, and the end-to-end tests (Prometheus live included).
test: lint unit rules e2e

lint:
	@unformatted="$$(gofmt -l $$(git ls-files '*.go'))"; \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

unit:
	$(GO) test -race -count=1 ./...

## e2e: build the distribution, run it against a local judge and check what comes
## out; validate every example config; run the demo as `make demo` does; run
## the alert rules and dashboard in a real Prometheus (the Debian package
## prometheus) scraping the collector, and the exemplar configuration.
e2e: $(COLLECTOR)
	RAGPRECISION_COLLECTOR=$(COLLECTOR) $(GO) test -count=1 -v -run "TestEndToEnd|TestExampleConfigsValidate|TestDemo|TestPrometheus" ./internal/e2e/ ./cmd/ragdemo/

## rules: check the Prometheus rules and run their unit tests with promtool.
rules:
	promtool check config deploy/prometheus/prometheus.yml
	cd deploy/prometheus && promtool test rules ragprecision.rules.test.yml

## dashboard: regenerate deploy/grafana/ragprecision.json from cmd/ragprecision-dashboard.
dashboard:
	$(GO) run ./cmd/ragprecision-dashboard -o deploy/grafana/ragprecision.json

## fuzz: run each span-reader fuzz target for FUZZTIME (default 30s).
FUZZTIME ?= 30s
fuzz:
	for t in FuzzProject FuzzGenAI FuzzOpenInference FuzzOpenLLMetry FuzzAttributes; do \
	  $(GO) test -run XXX -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) ./processor/ragprecisionprocessor/internal/spanreader/ || exit 1; \
	done

## bench: the pass-through cost per span next to its baselines, and the judges.
bench:
	$(GO) test -run XXX -bench . -benchmem ./processor/ragprecisionprocessor/ ./judge/... ./scoring/

## eval: agreement of builtin:lexical with HotpotQA relevance labels.
eval:
	$(GO) run ./cmd/ragprecision-eval

clean:
	rm -rf $(BIN) build
