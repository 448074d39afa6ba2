# pgreflect: `make run` starts a local project, `make test` runs every test.
GO      ?= go
BIN     := bin/pgreflect
# Extra flags for `pgreflect start`, e.g. make run ARGS='--port 8000'.
ARGS    ?=
# What `pgreflect version` prints; empty outside a git checkout (the binary then reports its build info).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)

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

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

deps:
	@.ci/run deps

clean:
	rm -rf bin
