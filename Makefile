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

.PHONY: all build demo validate test lint unit e2e rules dashboard fuzz bench eval cascade-curve clean

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

## demo: run the collector, on free ports, with builtin:lexical and demo traffic, and
## print the scores. A collector you started yourself: `go run ./cmd/ragdemo` sends it the traffic.
demo: $(COLLECTOR)
	$(GO) run ./cmd/ragdemo -collector $(COLLECTOR) -config examples/demo.yaml $(ARGS)

## validate: check a collector config without starting it, e.g.
##   make validate CONFIG=examples/demo.yaml
## The collector's own `validate` says nothing on success; this says which file
## is valid, or prints the problems and fails. ${env:...} in the file is read
## from your environment, as at start-up.
validate: $(COLLECTOR)
	@if [ -z "$(CONFIG)" ]; then echo "usage: make validate CONFIG=path/to/config.yaml" >&2; exit 2; fi; \
	status=0; \
	for c in $(CONFIG); do \
	  if out="$$($(COLLECTOR) validate --config "$$c" 2>&1)"; then \
	    [ -z "$$out" ] || echo "$$out"; echo "$$c is valid"; \
	  else \
	    echo "$$out" >&2; echo "$$c is not valid" >&2; status=1; \
	  fi; \
	done; \
	exit $$status

## test: formatting, vet, unit tests with the race detector, the rules' unit
## tests, and the end-to-end tests (Prometheus live included).
test: lint unit rules e2e

lint:
	@unformatted="$$(gofmt -l $$(git ls-files '*.go'))"; \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

# The tests that run the built distribution: `e2e` runs them, `unit` leaves
# them out (with CI set they fail rather than skip without the binary).
E2E_TESTS := TestEndToEnd|TestExampleConfigsValidate|TestDemo|TestJudgeOutageShowsInHealthCheck|TestPrometheus

unit:
	$(GO) test -race -count=1 -skip "$(E2E_TESTS)" ./...

## e2e: build the distribution, run it against a local judge and check what comes
## out; validate every example config; run the demo as `make demo` does, and
## against a collector started by hand; show a judge outage on the health
## extension; run the alert rules and dashboard in a real Prometheus (the
## Debian package prometheus) scraping the collector, and the exemplar
## configuration.
e2e: $(COLLECTOR)
	RAGPRECISION_COLLECTOR=$(COLLECTOR) $(GO) test -count=1 -v -run "$(E2E_TESTS)" ./internal/e2e/ ./cmd/ragdemo/

## rules: check the Prometheus rules and run their unit tests with promtool.
rules:
	promtool check config deploy/prometheus/prometheus.yml
	cd deploy/prometheus && promtool test rules ragprecision.rules.test.yml

## dashboard: regenerate deploy/grafana/ragprecision.json from cmd/ragprecision-dashboard.
dashboard:
	$(GO) run ./cmd/ragprecision-dashboard -o deploy/grafana/ragprecision.json

## fuzz: run every fuzz target for FUZZTIME (default 30s): each span reader (with
## its cost bound), the JSON scanner's cost and its agreement with encoding/json,
## and the lexical judge against its frozen reference.
FUZZTIME ?= 30s
SPANREADER := ./processor/ragprecisionprocessor/internal/spanreader/
fuzz:
	for t in FuzzProject FuzzGenAI FuzzOpenInference FuzzOpenLLMetry FuzzAttributes FuzzJSONCost FuzzFindersAgainstLegacy; do \
	  $(GO) test -run XXX -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) $(SPANREADER) || exit 1; \
	done
	$(GO) test -run XXX -fuzz '^FuzzSameAsReference$$' -fuzztime $(FUZZTIME) ./judge/internal/lexical/

## bench: the pass-through cost per span next to its baselines, and the judges.
bench:
	$(GO) test -run XXX -bench . -benchmem ./processor/ragprecisionprocessor/ ./judge/... ./scoring/

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
