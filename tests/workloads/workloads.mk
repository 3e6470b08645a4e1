# SPDX-License-Identifier: Apache-2.0
# Workloads the integration tests profile, each built with known flags.
# Called from the top Makefile with O= set to the build directory.
W := $(O)/workloads
SRC := tests/workloads
CC ?= gcc
Q ?= @
# known stacks: no inlining across the chains, no sibling calls
BASE := -g -O2 -fno-optimize-sibling-calls -fno-inline-small-functions
FP := $(BASE) -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
NOFP := $(BASE) -fomit-frame-pointer

TARGETS := $(W)/split-fp $(W)/split-nofp-pie $(W)/split-nofp-nopie \
	$(W)/split-nofp-static $(W)/syscalls-fp

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
