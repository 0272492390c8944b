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

.PHONY: all build demo validate test lint unit e2e fuzz bench bench-short eval clean

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

## test: formatting, vet, unit tests with the race detector, the end-to-end test,
## and the short whole-distribution benchmark (ratios only, about a minute).
test: lint unit e2e bench-short

lint:
	@unformatted="$$(gofmt -l $$(git ls-files '*.go'))"; \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

# The tests that run the built distribution: `e2e` runs them, `unit` leaves
# them out (with CI set they fail rather than skip without the binary).
E2E_TESTS := TestEndToEnd|TestExampleConfigsValidate|TestDemo|TestJudgeOutageShowsInHealthCheck

# The short benchmark of the whole distribution: `bench-short` runs it alone,
# so that no other test shares the cores it measures.
DIST_TESTS := TestDistributionShort

unit:
	$(GO) test -race -count=1 -skip "$(E2E_TESTS)|$(DIST_TESTS)" ./...

## e2e: build the distribution, run it against a local judge and check what comes
## out; validate every example config; run the demo as `make demo` does, and
## against a collector started by hand.
e2e: $(COLLECTOR)
	RAGPRECISION_COLLECTOR=$(COLLECTOR) $(GO) test -count=1 -v -run "$(E2E_TESTS)" ./internal/e2e/ ./cmd/ragdemo/

## fuzz: run each span-reader fuzz target for FUZZTIME (default 30s).
FUZZTIME ?= 30s
fuzz:
	for t in FuzzProject FuzzGenAI FuzzOpenInference FuzzOpenLLMetry FuzzAttributes; do \
	  $(GO) test -run XXX -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) ./processor/ragprecisionprocessor/internal/spanreader/ || exit 1; \
	done

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
	  ./processor/... ./judge/internal/... ./scoring/ | tee $(BENCH_DIR)/micro.txt
	set -o pipefail; $(GO) test -run '^$$' -bench CacheHit -benchmem ./judge/ | tee -a $(BENCH_DIR)/micro.txt
	set -o pipefail; $(GO) test -run '^$$' -bench JudgedThroughput -benchtime 5s ./judge/ | tee -a $(BENCH_DIR)/micro.txt
	set -o pipefail; $(GO) run ./cmd/ragprecision-bench -collector $(COLLECTOR) -micro $(BENCH_DIR)/micro.txt \
	  -dir $(BENCH_DIR)/dist $(ARGS) | tee $(BENCH_DIR)/report.md

## bench-short: the whole distribution for a few seconds per pipeline, checking
## only loose ratios to the pipeline without ragprecision and that no span is
## lost (part of `make test`).
bench-short: $(COLLECTOR)
	RAGPRECISION_COLLECTOR=$(COLLECTOR) $(GO) test -count=1 -v -run "$(DIST_TESTS)|TestConfigsValidate" ./internal/distbench/

## eval: agreement of a judge with human relevance labels: HotpotQA when
## ../shared/data/hotpotqa_dev500.jsonl (or $RAGPRECISION_HOTPOTQA) exists, else
## the small set in cmd/ragprecision-eval/testdata. ARGS: e.g. -single-chunk,
## -judge openai:gpt-4o-mini, -data my-set.jsonl (docs/EVAL_FORMAT.md).
eval:
	$(GO) run ./cmd/ragprecision-eval $(ARGS)

clean:
	rm -rf $(BIN) build
