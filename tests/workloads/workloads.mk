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

C_NOFP := qsort signal recurse threads dlopen short hopnames anonexec fakert \
	offcpu pingpong
TARGETS := $(W)/split-fp $(W)/split-nofp-pie $(W)/split-nofp-nopie \
	$(W)/split-nofp-static $(W)/syscalls-fp \
	$(addprefix $(W)/,$(C_NOFP)) $(W)/libplugin.so $(W)/cxx \
	$(W)/go-split $(W)/go-split-stripped $(W)/go-alloc $(W)/cfareg \
	$(addprefix $(W)/split-,lld-pie lld-nopie mold-pie mold-nopie) \
	$(W)/split-hugepage $(W)/split-debugframe $(W)/split-lld-splittext \
	$(W)/rust-split $(W)/inline

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
# inline frames (issue 23): -O2 -g and the compiler's own inlining, so
# only the always_inline pair folds into caller
$(W)/inline: $(SRC)/inline.c $(SRC)/common.h | $(W)
	$(Q)$(CC) -g -O2 -fno-optimize-sibling-calls -o $@ $<
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

# The split built by other linkers and layouts (issue 14: the address of a
# pc in a file).  lld and mold start the text segment on the file page
# that ends the read-only one; -z max-page-size=2M puts text on 2 MiB
# pages; the debugframe variant has no .eh_frame, only .debug_frame.  A
# linker that is missing leaves its binaries unbuilt, and the tests that
# profile them skip, saying why.
PIE := -fpie -pie
NOPIE := -fno-pie -no-pie
define linked
$(W)/split-$(1)-pie: $(SRC)/split.c | $(W)
	$(Q)if command -v $(2) >/dev/null; then $(CC) $(NOFP) $(PIE) -fuse-ld=$(1) -o $$@ $$<; else echo "no $(2): split-$(1)-* not built (make deps)"; fi
$(W)/split-$(1)-nopie: $(SRC)/split.c | $(W)
	$(Q)if command -v $(2) >/dev/null; then $(CC) $(NOFP) $(NOPIE) -fuse-ld=$(1) -o $$@ $$<; fi
endef
$(eval $(call linked,lld,ld.lld))
$(eval $(call linked,mold,ld.mold))
# split text: chain_b in a second executable segment, which lld starts on
# the file page of the first one
$(W)/split-lld-splittext: $(SRC)/split.c | $(W)
	$(Q)if command -v ld.lld >/dev/null; then $(CC) $(NOFP) $(PIE) -DFAR_TEXT -fuse-ld=lld -Wl,--section-start=fartext=0x800000 -o $@ $<; fi
$(W)/split-hugepage: $(SRC)/split.c | $(W)
	$(Q)$(CC) $(NOFP) $(PIE) -Wl,-zcommon-page-size=2097152 -Wl,-zmax-page-size=2097152 -o $@ $<
$(W)/split-debugframe: $(SRC)/split.c | $(W)
	$(Q)$(CC) $(NOFP) $(PIE) -fno-asynchronous-unwind-tables -o $@.tmp $<
	$(Q)objcopy --remove-section .eh_frame --remove-section .eh_frame_hdr $@.tmp $@ && rm -f $@.tmp

# Rust with the defaults of the machine's rustc (rustup's, else PATH's)
RUSTC ?= $(firstword $(wildcard $(HOME)/.cargo/bin/rustc /root/.cargo/bin/rustc) $(shell command -v rustc))
$(W)/rust-split: $(SRC)/rust/split.rs | $(W)
	$(Q)if [ -n "$(RUSTC)" ]; then MAKEFLAGS= $(RUSTC) -O -o $@ $<; else echo "no rustc: rust-split not built"; fi
