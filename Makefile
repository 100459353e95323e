# tokenstorm — plain `make` prints this help.
GO        ?= go
PKGS      ?= ./...
BENCHTIME ?= 1s
BENCH     ?= .

.DEFAULT_GOAL := help

.PHONY: help build test test-go typecheck lint bench cover demo mock clean

help: ## show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## build bin/tokenstorm
	$(GO) build -o bin/tokenstorm ./cmd/tokenstorm

test: test-go typecheck ## the full test suite (README's test command): go test -race + TypeScript check of examples

test-go: ## go vet and go test -race over every package
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 -timeout 15m $(PKGS)

typecheck: ## type-check examples/*.js against @types/k6 and xk6ext/index.d.ts
	cd examples && npm ci --no-audit --no-fund --loglevel=error && npx tsc -p .

lint: ## gofmt (must be clean) and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

bench: ## every benchmark once (BENCH=regexp BENCHTIME=… PKGS=… to narrow)
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) -benchmem -timeout 30m $(PKGS)

cover: ## test coverage summary
	$(GO) test -count=1 -coverprofile=coverage.out $(PKGS) >/dev/null
	$(GO) tool cover -func=coverage.out | tail -1

demo: ## the main job on the embedded mock: run examples/quickstart.js
	$(GO) run ./cmd/tokenstorm run examples/quickstart.js

mock: ## serve the embedded mock LLM on 127.0.0.1:8000
	$(GO) run ./cmd/tokenstorm mock --addr 127.0.0.1:8000

clean: ## remove build outputs
	rm -rf bin coverage.out examples/node_modules
