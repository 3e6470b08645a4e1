# SPDX-License-Identifier: Apache-2.0
# Workloads the integration tests profile, each built with known flags.
# Called from the top Makefile with O= set to the build directory.
W := $(O)/workloads
SRC := tests/workloads
CC ?= gcc
CXX ?= g++
Q ?= @
GO ?= /usr/lib/go-1.19/bin/go
# known stacks: no inlining across the chains, no sibling calls
BASE := -g -O2 -fno-optimize-sibling-calls -fno-inline-small-functions
FP := $(BASE) -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
NOFP := $(BASE) -fomit-frame-pointer

C_NOFP := qsort signal recurse threads dlopen short hopnames anonexec
TARGETS := $(W)/split-fp $(W)/split-nofp-pie $(W)/split-nofp-nopie \
	$(W)/split-nofp-static $(W)/syscalls-fp \
	$(addprefix $(W)/,$(C_NOFP)) $(W)/libplugin.so $(W)/cxx \
	$(W)/go-split $(W)/go-split-stripped $(W)/go-alloc $(W)/cfareg

all: $(TARGETS)

$(W):
	$(Q)mkdir -p $@

$(W)/split-fp: $(SRC)/split.c | $(W)
	$(Q)$(CC) $(FP) -o $@ $<
$(W)/split-nofp-pie: $(SRC)/split.c | $(W)
	$(Q)$(CC) $(NOFP) -fpie -pie -o $@ $<
$(W)/split-nofp-nopie: $(SRC)/split.c | $(W)
	$(Q)$(CC) $(NOFP) -fno-pie -no-pie -o $@ $<
$(W)/split-nofp-static: $(SRC)/split.c | $(W)
	$(Q)$(CC) $(NOFP) -static -o $@ $<
$(W)/syscalls-fp: $(SRC)/syscalls.c | $(W)
	$(Q)$(CC) $(FP) -o $@ $<
$(addprefix $(W)/,$(C_NOFP)): $(W)/%: $(SRC)/%.c $(SRC)/common.h | $(W)
	$(Q)$(CC) $(NOFP) -pthread -o $@ $< -ldl
$(W)/libplugin.so: $(SRC)/plugin.c $(SRC)/common.h | $(W)
	$(Q)$(CC) $(NOFP) -fpic -shared -o $@ $<
$(W)/cxx: $(SRC)/cxx.cc $(SRC)/common.h | $(W)
	$(Q)$(CXX) $(NOFP) -o $@ $<
$(W)/cfareg: $(SRC)/cfareg.c $(SRC)/cfareg.S $(SRC)/common.h | $(W)
	$(Q)$(CC) $(NOFP) -o $@ $(SRC)/cfareg.c $(SRC)/cfareg.S

# Go (Debian's golang-1.19): no module, caches inside the build directory
GOENV := GO111MODULE=off GOPATH=$(O)/go GOCACHE=$(O)/go-cache GOFLAGS= HOME=$(O)
$(W)/go-split: $(SRC)/go/split.go | $(W)
	$(Q)if [ -x $(GO) ]; then $(GOENV) $(GO) build -o $@ $<; else echo "no $(GO): Go workloads skipped"; fi
$(W)/go-split-stripped: $(SRC)/go/split.go | $(W)
	$(Q)if [ -x $(GO) ]; then $(GOENV) $(GO) build -ldflags='-s -w' -o $@ $<; fi
$(W)/go-alloc: $(SRC)/go/alloc.go | $(W)
	$(Q)if [ -x $(GO) ]; then $(GOENV) $(GO) build -o $@ $<; fi
