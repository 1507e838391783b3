# hgrewrite: make builds bin/hgrewrite and bin/libhgrt.so.
GO      ?= go
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
BIN     := bin
GOFILES := $(shell find . -name '*.go' -not -path './testdata/*')
# The runtime library and every package it is built from.
RTFILES := $(shell find runtime abi shadow msm -name '*.go' -o -name '*.c' -o -name '*.h' | grep -v _test.go)

.PHONY: all test demo bench clean check-tools vet

all: $(BIN)/hgrewrite $(BIN)/libhgrt.so

$(BIN)/hgrewrite: $(GOFILES) go.mod
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $@ ./cmd/hgrewrite

$(BIN)/libhgrt.so: $(RTFILES) go.mod
	$(GO) build -buildmode=c-shared -o $@ ./runtime
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
