# ragprecision: the two commands a newcomer needs are `make demo` and `make test`.
SHELL := /usr/bin/env bash
GO    ?= go

.PHONY: test lint unit

## test: every check CI runs — formatting, vet, unit tests with the race detector.
test: lint unit

lint:
	@unformatted="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

unit:
	$(GO) test -race -count=1 ./...
