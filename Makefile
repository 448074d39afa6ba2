# pgreflect: `make run` starts a local project, `make test` runs every test.
GO      ?= go
BIN     := bin/pgreflect
# Extra flags for `pgreflect start`, e.g. make run ARGS='--port 8000'.
ARGS    ?=
# What `pgreflect version` prints; empty outside a git checkout (the binary then reports its build info).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
# Measured time per contender and query of the HTTP comparison, e.g. make bench BENCH_DURATION=4s.
BENCH_DURATION ?= 16s
# More flags of bin/benchcmp (bin/benchcmp -h), e.g. BENCH_ARGS=-contenders=pgreflect,ceiling.
BENCH_ARGS ?=

.PHONY: build run test vet bench deps clean

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/pgreflect

# Installs PostgreSQL first when it is missing (as root on Debian), then serves until Ctrl-C.
run: deps build
	./$(BIN) start $(ARGS)

test: vet
	$(GO) test -count=1 -timeout 20m ./...

vet:
	$(GO) vet ./...

# The Go benchmarks, then the side-by-side HTTP comparison (internal/benchcmp: its own PostgreSQL, pgreflect,
# the hand-written ceiling, PostGraphile from npm), which writes BENCHMARKS.md and bench/results.{json,png}.
bench: build
	@.ci/run deps bench
	@mkdir -p bench
	$(GO) test -p 1 -run '^$$' -bench . -benchmem ./... > bench/go-bench.txt 2>&1 || { cat bench/go-bench.txt; exit 1; }
	@cat bench/go-bench.txt
	$(GO) build -o bin/benchcmp ./internal/benchcmp/cmd/benchcmp
	bin/benchcmp -duration $(BENCH_DURATION) -go-bench bench/go-bench.txt $(BENCH_ARGS)

deps:
	@.ci/run deps

clean:
	rm -rf bin
