# hgrewrite: make builds bin/hgrewrite and bin/libhgrt.so.
GO      ?= go
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
BIN     := bin
GOFILES := $(shell find . -name '*.go' -not -path './testdata/*')
# The runtime library and every package it is built from.
RTFILES := $(shell find runtime abi shadow msm -name '*.go' -o -name '*.c' -o -name '*.h' | grep -v _test.go)
# The Go runtime settings libhgrt.so is built with (its GODEBUG defaults;
# a GODEBUG in the program's environment still overrides them):
#   containermaxprocs=0: GOMAXPROCS does not follow container limits, so
#     the Go runtime keeps no cgroup files open in the program's
#     descriptor table (descriptors 3 and 4 of every rewritten program
#     otherwise);
#   asyncpreemptoff=1: the Go runtime never sends its preemption signal
#     (SIGURG). Sent to a program thread during a call into Go, it could
#     arrive once the thread was back in the program: a sleep cut short
#     with EINTR, a SIGURG handler of the program's run
#     (testdata/progs/qa_stray_signals.c).
# The tests build the library through this rule (cmd/hgrewrite/e2e_test.go).
RTGODEBUG := containermaxprocs=0,asyncpreemptoff=1

.PHONY: all test demo bench clean check-tools vet

all: $(BIN)/hgrewrite $(BIN)/libhgrt.so

$(BIN)/hgrewrite: $(GOFILES) go.mod
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $@ ./cmd/hgrewrite

$(BIN)/libhgrt.so: $(RTFILES) go.mod
	$(GO) build -buildmode=c-shared -ldflags "-X=runtime.godebugDefault=$(RTGODEBUG)" -o $@ ./runtime
	rm -f $(BIN)/libhgrt.h

check-tools:
	@./.ci/check-tools

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }

test: check-tools all vet
	$(GO) test -count=1 -timeout 20m ./...
	$(GO) test -count=1 -race -timeout 10m ./msm/ ./shadow/ ./runtime/hgopts/ ./runtime/detect/

demo: all
	@./examples/demo.sh

bench: all
	@./bench/run.sh

clean:
	rm -rf $(BIN) build
