# pgreflect: `make run` starts a local project, `make test` runs every test.
GO      ?= go
BIN     := bin/pgreflect
# The PostgreSQL major version the tests run on, e.g. make test PG=17 (fetched by .ci/pg-versions); empty for
# the machine's own (pgcluster.BinDir).
PG      ?=
# What make test runs, and with which flags: .ci/run runs the database-facing packages on each other version
# without the race detector.
TEST_PKGS  ?= ./...
TEST_FLAGS ?= -race
# Extra flags for `pgreflect start`, e.g. make run ARGS='--port 8000'.
ARGS    ?=
# What `pgreflect version` prints; empty outside a git checkout (the binary then reports its build info).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
# Measured time per contender and query of the HTTP comparison, e.g. make bench BENCH_DURATION=4s.
BENCH_DURATION ?= 16s
# More flags of bin/benchcmp (bin/benchcmp -h), e.g. BENCH_ARGS=-contenders=pgreflect,ceiling.
BENCH_ARGS ?=

# How long `make fuzz` runs each fuzz target, and how long `make soak` drives load.
FUZZTIME      ?= 30s
SOAK_DURATION ?= 3m

.PHONY: build run test vet bench deps clean fuzz soak

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/pgreflect

# Installs PostgreSQL first when it is missing (as root on Debian), then serves until Ctrl-C.
run: deps build
	./$(BIN) start $(ARGS)

# With the race detector: the engine, the caches and the auth store are all used concurrently. testsummary
# runs go test and lists at the end the tests that skipped, with their reasons; it exits with go test's status.
test: vet
	@if [ -n "$(PG)" ]; then bindir=$$(.ci/pg-versions bindir "$(PG)") || exit 1; \
		export PGREFLECT_PG_BINDIR="$$bindir"; echo "PGREFLECT_PG_BINDIR=$$bindir"; fi; \
	echo "$(GO) run ./internal/devtools/testsummary $(TEST_FLAGS) -count=1 -timeout 60m $(TEST_PKGS)"; \
	$(GO) run ./internal/devtools/testsummary $(TEST_FLAGS) -count=1 -timeout 60m $(TEST_PKGS)

# Every Fuzz target of the module, one after another, FUZZTIME each; a failure stops the run and leaves the
# input in the package's testdata/fuzz/<FuzzName>/, which `make test` then replays.
fuzz:
	@set -e; grep -rlE --include='*_test.go' '^func Fuzz' . | sort | while read -r file; do \
		for name in $$(sed -nE 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/p' "$$file"); do \
			echo "== $$name ($$(dirname $$file), $(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) "$$(dirname $$file)"; \
		done; \
	done

# A bounded soak: its own PostgreSQL and server, mixed load on 127.0.0.1, DDL, restarts of PostgreSQL and of
# the server.
soak:
	$(GO) run ./internal/devtools/soak -duration $(SOAK_DURATION)

# go vet and staticcheck (pinned in go.mod's tool directive; `go tool` builds it from the module cache).
vet:
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

# The Go benchmarks, then the side-by-side HTTP comparison (internal/devtools/benchcmp: its own PostgreSQL, pgreflect,
# the hand-written ceiling, PostGraphile v4 and v5 from npm) and the cost curves of pgreflect and the ceiling,
# which write BENCHMARKS.md and bench/*.{json,png}.
bench: build
	@.ci/run deps bench
	@mkdir -p bench
	$(GO) test -p 1 -run '^$$' -bench . -benchmem ./... > bench/go-bench.txt 2>&1 || { cat bench/go-bench.txt; exit 1; }
	@cat bench/go-bench.txt
	$(GO) build -o bin/benchcmp ./internal/devtools/benchcmp/cmd/benchcmp
	bin/benchcmp -duration $(BENCH_DURATION) -go-bench bench/go-bench.txt $(BENCH_ARGS)

deps:
	@.ci/run deps

clean:
	rm -rf bin
