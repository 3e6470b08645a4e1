# SPDX-License-Identifier: Apache-2.0
#
# libFuzzer targets for every parser of bytes we do not control.  Called
# from the top Makefile (make fuzz FUZZ_SECONDS=N) with O= set to the
# absolute build directory:
#
#   builds $(O)/fuzz/fuzz_<name> for each tests/fuzz/fuzz_<name>.c, with
#     clang -fsanitize=fuzzer,address,undefined over the daemon's sources;
#   makes a seed corpus from real files of this machine (libc, ld.so,
#     /bin/true, the vDSO, small binaries built here with .debug_frame,
#     compressed sections, C++ names, Go if installed, the Python builds,
#     /proc text): $(O)/fuzz/seeds/<name>;
#   runs each target for FUZZ_SECONDS (FUZZ_JOBS at once, default the
#     number of CPUs), keeps what it learns in $(O)/fuzz/corpus/<name>,
#     prints exec/s and coverage, and fails if any target found a crash
#     (the input is in $(O)/fuzz/artifacts/).
#
#   FUZZ_TARGETS="elf ksyms"   only these
#   FUZZ_FILES="..."           other seed files (ELF)

F := $(O)/fuzz
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
CC := gcc
CXX := g++
GO ?= /usr/lib/go-1.19/bin/go
PKG_CONFIG ?= pkg-config
Q ?= @

PKGS := libbpf libelf zlib lmdb libcurl libcrypto libdw libzstd libxxhash liblzma
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)

SAN := -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
FUZZ_CFLAGS := -g -O1 $(SAN) -fsanitize=fuzzer-no-link \
	-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -std=gnu11 -D_GNU_SOURCE \
	-pthread -MMD -MP -Wall -Wunused-parameter \
	-I. -Ibpf -Iuserspace -Iuserspace/core -Iuserspace/reporter -Istore -Itests/fuzz $(PKG_CFLAGS)
LIBS := $(PKG_LIBS) -lstdc++ -lm -pthread

# The daemon's sources that need no generated file (skeleton, protobuf).
LIB_SRCS := $(filter-out userspace/main.c userspace/tracer%.c,\
	$(wildcard userspace/*.c userspace/core/*.c store/*.c)) tests/fuzz/fuzz_util.c \
	tests/unit/synth_elf.c tests/unit/py_fixture.c
LIB_OBJS := $(patsubst %.c,$(F)/obj/%.o,$(LIB_SRCS))
ALL_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,\
	$(filter-out tests/fuzz/fuzz_util.c,$(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_TARGETS ?= $(ALL_TARGETS)
FUZZERS := $(addprefix $(F)/fuzz_,$(FUZZ_TARGETS))

# CPython builds: Debian's and pyenv's, for the Python targets and seeds.
PYROOT := $(shell pyenv root 2>/dev/null)
PY_BINS := $(filter-out %-config %m,$(wildcard /usr/bin/python3.[0-9]* \
	$(PYROOT)/versions/3.*/bin/python3.[0-9]*))
PY_LIBS := $(wildcard $(PYROOT)/versions/3.*/lib/libpython3.*.so.1.0)
empty :=
space := $(empty) $(empty)
export EP_FUZZ_PYTHONS := $(subst $(space),:,$(strip $(PY_LIBS) $(PY_BINS)))

# Seed ELF files: the machine's, and small ones built here.
SEED_BINS := $(F)/bin/dbgframe $(F)/bin/dbgframe-zlib $(F)/bin/cxx \
	$(if $(wildcard $(GO)),$(F)/bin/go-split)
FUZZ_FILES ?= $(wildcard /lib/x86_64-linux-gnu/libc.so.6 \
	/lib64/ld-linux-x86-64.so.2 /bin/true)

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all build
.SUFFIXES:

all: build $(F)/seeds/.done
	$(Q)tests/fuzz/run.sh $(F) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

build: $(FUZZERS)

$(F)/obj/%.o: %.c
	@mkdir -p $(@D)
	@printf '  %-8s %s\n' FUZZCC $<
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(F)/libfuzz.a: $(LIB_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^

$(F)/fuzz_%: $(F)/obj/tests/fuzz/fuzz_%.o $(F)/libfuzz.a
	@printf '  %-8s %s\n' FUZZLD $@
	$(Q)$(FUZZ_CC) $(SAN) -fsanitize=fuzzer -o $@ $^ $(LIBS)

$(F)/seeds-gen: $(F)/obj/tests/fuzz/seeds.o $(F)/libfuzz.a
	$(Q)$(FUZZ_CC) $(SAN) -fsanitize=fuzzer-no-link -o $@ $^ $(LIBS)

# .debug_frame (no .eh_frame for our code), and the same compressed
$(F)/bin/dbgframe: tests/workloads/recurse.c
	@mkdir -p $(@D)
	$(Q)$(CC) -g -O1 -fno-asynchronous-unwind-tables -o $@ $<
$(F)/bin/dbgframe-zlib: tests/workloads/recurse.c
	@mkdir -p $(@D)
	$(Q)$(CC) -g -O1 -fno-asynchronous-unwind-tables \
		-Wl,--compress-debug-sections=zlib -o $@ $<
$(F)/bin/cxx: tests/workloads/cxx.cc
	@mkdir -p $(@D)
	$(Q)$(CXX) -O1 -o $@ $<
$(F)/bin/go-split: tests/workloads/go/split.go
	@mkdir -p $(@D)
	$(Q)GO111MODULE=off GOPATH=$(F)/go GOCACHE=$(F)/go-cache GOFLAGS= \
		HOME=$(F) $(GO) build -o $@ $<

$(F)/seeds/.done: $(F)/seeds-gen $(SEED_BINS) tests/fuzz/run.sh \
		tests/fuzz/pyline_seeds.py
	$(Q)rm -rf $(F)/seeds
	$(Q)$(F)/seeds-gen $(F)/seeds $(FUZZ_FILES) $(SEED_BINS)
	$(Q)tests/fuzz/run.sh --text-seeds $(F)/seeds $(PY_BINS)
	$(Q)touch $@

-include $(shell find $(F)/obj -name '*.d' 2>/dev/null)
