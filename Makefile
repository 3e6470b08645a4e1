# SPDX-License-Identifier: Apache-2.0
#
# The whole build: BPF objects, skeletons, userland, tests, deps.
#   make            build ./ebpf-profiler
#   make test       unit tests under sanitizers, then unit + BPF integration
#                   tests and the kernel matrix (as root)
#   make test-asan  unit tests under ASan, LSan and UBSan (O=build-asan)
#   make deps       install the Debian packages (idempotent)
#   make test-qemu  the kernel matrix under qemu (KERNELS="6.1-generic host")
#   make fuzz       libFuzzer targets, FUZZ_SECONDS each (tests/fuzz/fuzz.mk)
#   make ARCH=arm64 cross-build for arm64 into build-arm64/ (the daemon
#                   is build-arm64/ebpf-profiler, the unit tests
#                   build-arm64/tests/runner)
#   O=dir           build directory (default: build; build-arm64 when cross)
#   V=1             show the commands
#   SANITIZER=address,undefined   build with sanitizers

# The target architecture: the machine's own unless ARCH says otherwise.
# A cross build has its own build directory and binary, so the host's
# build/ and ./ebpf-profiler stay as they are.
HOST_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
ARCH ?= $(HOST_ARCH)
ifeq ($(filter x86 arm64,$(ARCH)),)
$(error ARCH=$(ARCH): only x86 and arm64 are supported)
endif
ifeq ($(ARCH),$(HOST_ARCH))
O ?= build
BIN := ebpf-profiler
else
O ?= build-$(ARCH)
BIN := $(O)/ebpf-profiler
endif

V ?= 0
SANITIZER ?=
FUZZ_SECONDS ?= 60

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
PROTOC_C ?= protoc-c
PKG_CONFIG ?= pkg-config

# Cross to arm64 from x86: Debian's cross compiler, and the arm64 builds of
# the libraries (multiarch, installed by make deps) through pkg-config.
ifeq ($(ARCH)-$(HOST_ARCH),arm64-x86)
CROSS_COMPILE ?= aarch64-linux-gnu-
ifeq ($(origin CC),default)
CC := $(CROSS_COMPILE)gcc
endif
AR := $(CROSS_COMPILE)ar
PKG_CONFIG := PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig pkg-config
endif
AR ?= ar

VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
GIT_REV := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)

PKGS := libbpf libelf zlib lmdb libprotobuf-c libcurl libcrypto libdw libzstd libxxhash liblzma
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
# libcurl's headers only: the OTLP sink loads it when it opens (dlopen;
# linked, its libraries cost every start 7 ms)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(filter-out libcurl,$(PKGS)) 2>/dev/null)

# Warnings live in their own variable so a user's CFLAGS cannot drop them.
WARNINGS := -Wall -Wextra -Wno-missing-field-initializers \
	-Wshadow -Wpointer-arith -Wformat=2 -Wvla -Werror=implicit-function-declaration
CFLAGS ?= -O2 -g
ALL_CFLAGS := $(CFLAGS) $(WARNINGS) -std=gnu11 -D_GNU_SOURCE -pthread \
	-MMD -MP -I. -Ibpf -Iuserspace -Iuserspace/core -Iuserspace/reporter -Istore -I$(O) -I$(O)/gen -I$(O)/skel \
	-DEP_VERSION='"$(VERSION)"' -DEP_GIT_REV='"$(GIT_REV)"' $(PKG_CFLAGS)
ALL_LDFLAGS := $(LDFLAGS) -pthread
LIBS := $(PKG_LIBS) -lstdc++ -lm

ifneq ($(SANITIZER),)
ALL_CFLAGS += -fsanitize=$(SANITIZER) -fno-omit-frame-pointer -fno-sanitize-recover=all
ALL_LDFLAGS += -fsanitize=$(SANITIZER)
endif

# The BPF objects are built for the target's pt_regs and kernel structs.
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Ibpf \
	-Wall -Wno-unused-function -Wno-compare-distinct-pointer-types -mcpu=v3

.DELETE_ON_ERROR:
.PHONY: FORCE all clean deps test test-build asan-runner unit-test test-asan test-qemu qemu-arm64 bench bench-extract bench-cache bench-bpf bench-ab bench-ring bench-offcpu bench-compare bench-inline bench-inline-rss bench-footprint fuzz run install help
.SUFFIXES:

all: $(BIN)

# ---- BPF ---------------------------------------------------------------
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(O)/bpf/%.bpf.o,$(BPF_SRCS))
# Under the build directory: O=build and O=build-asan each have their own.
SKEL := $(O)/skel/profiler.skel.h

$(O)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) vmlinux/$(ARCH)/vmlinux.h | $(O)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(O)/bpf/profiler.bpf.o: $(BPF_OBJS)
	$(call msg,BPFLINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(SKEL): $(O)/bpf/profiler.bpf.o | $(O)/skel
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name profiler > $@.tmp && mv $@.tmp $@

# ---- protobuf ----------------------------------------------------------
PROTOS := $(shell find userspace/reporter/proto -name '*.proto' 2>/dev/null)
PROTO_C := $(patsubst userspace/reporter/proto/%.proto,$(O)/gen/%.pb-c.c,$(PROTOS))
PROTO_H := $(PROTO_C:.c=.h)
# Generated sources are wanted files, not intermediates make may delete.
.SECONDARY: $(PROTO_C) $(PROTO_H)

$(O)/gen/%.pb-c.c $(O)/gen/%.pb-c.h: userspace/reporter/proto/%.proto | $(O)/gen
	$(call msg,PROTOC,$<)
	$(Q)$(PROTOC_C) -Iuserspace/reporter/proto --c_out=$(O)/gen $<

# ---- userland ----------------------------------------------------------
LIB_SRCS := $(filter-out userspace/main.c,$(wildcard userspace/*.c userspace/core/*.c userspace/reporter/*.c store/*.c))
LIB_OBJS := $(patsubst %.c,$(O)/%.o,$(LIB_SRCS)) $(patsubst %.c,%.o,$(PROTO_C))
MAIN_OBJ := $(O)/userspace/main.o

$(O)/%.o: %.c | $(PROTO_H)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(O)/gen/%.pb-c.o: $(O)/gen/%.pb-c.c $(PROTO_H)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(filter-out -Wshadow,$(ALL_CFLAGS)) -c $< -o $@

$(O)/libprofiler.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# The version and revision the binary names (-version, /metrics, OTLP's
# scope and User-Agent) come from -D flags: the objects that use them are
# built again when they change (a new commit), not only when their
# sources do.
REV_STAMP := $(O)/gen/revision
$(REV_STAMP): FORCE | $(O)/gen
	$(Q)echo '$(VERSION) $(GIT_REV)' | cmp -s - $@ || echo '$(VERSION) $(GIT_REV)' > $@
$(MAIN_OBJ) $(O)/userspace/metrics.o $(O)/userspace/reporter/otlp.o \
	$(O)/userspace/reporter/otlp_sink.o: $(REV_STAMP)
FORCE:

# Only the tracer (tracer.c, tracer_maps.c, tracer_keep.c) includes the
# skeleton.
$(O)/userspace/tracer.o $(O)/userspace/tracer_maps.o \
	$(O)/userspace/tracer_keep.o: $(SKEL)

$(BIN): $(MAIN_OBJ) $(O)/libprofiler.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# ---- tests -------------------------------------------------------------
TEST_SRCS := $(wildcard tests/unit/*.c tests/integration/*.c)
TEST_OBJS := $(patsubst %.c,$(O)/%.o,$(TEST_SRCS))
RUNNER := $(O)/tests/runner

# Every allocation of the daemon's code goes through the tests' fault
# injection (tests/unit/alloc_fault.h), every ELF file it opens through
# tests/unit/file_cut.h (a file cut short right after its open).
TEST_WRAPS := $(foreach f,malloc calloc realloc reallocarray strdup,-Wl,--wrap=$(f)) \
	-Wl,--wrap=elfm_open_fd

$(RUNNER): $(TEST_OBJS) $(O)/libprofiler.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $(TEST_WRAPS) -o $@ $^ $(LIBS)

# Workloads the integration tests profile, built with known flags.
WORKLOADS_DIR := $(O)/workloads
workloads: ebpf-profiler
	$(Q)$(MAKE) --no-print-directory -f tests/workloads/workloads.mk O=$(abspath $(O)) Q=$(Q)

# TEST: a name filter passed to the runner (make test TEST=folded).
# make test: everything the tests run is built first, JOBS at a time (the
# machine's CPUs; the runs are not parallel, the builds are), then the unit
# tests under ASan, LSan and UBSan (EP_SKIP_ASAN=1 leaves them out), then
# every test with the normal build: the runner's last line is
# "N passed, N failed".
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
test:
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) test-build
	$(Q)if [ -z "$$EP_SKIP_ASAN" ]; then $(MAKE) --no-print-directory test-asan; fi
	$(Q)EP_BIN=$(abspath ebpf-profiler) EP_WORKLOADS=$(abspath $(WORKLOADS_DIR)) \
		EP_SKEL=$(abspath $(SKEL)) EP_SRCDIR=$(CURDIR) $(RUNNER) $(TEST)

test-build: ebpf-profiler $(RUNNER) workloads qemu-arm64 $(if $(EP_SKIP_ASAN),,asan-runner)

unit-test: $(RUNNER)
	$(Q)EP_NO_ROOT_TESTS=1 EP_SRCDIR=$(CURDIR) $(RUNNER) $(TEST)

# The unit tests under AddressSanitizer (and LeakSanitizer: the runner
# checks each test for leaks) and UndefinedBehaviorSanitizer, built in
# their own directory; the first error fails its test.  No root needed.
ASAN_O ?= build-asan
SAN_ENV := ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
asan-runner:
	$(Q)$(MAKE) --no-print-directory O=$(ASAN_O) SANITIZER=address,undefined \
		$(ASAN_O)/tests/runner
test-asan: asan-runner
	$(Q)$(SAN_ENV) EP_NO_ROOT_TESTS=1 EP_SRCDIR=$(CURDIR) \
		$(ASAN_O)/tests/runner $(TEST)

test-qemu: ebpf-profiler workloads qemu-arm64
	$(Q)EP_WORKLOAD=$(abspath $(WORKLOADS_DIR))/split-nofp-pie EP_SKEL=$(abspath $(SKEL)) \
		tests/qemu/run-matrix.sh $(KERNELS)

# The kernel matrix's arm64 rows boot the cross build (build-arm64/, 1 to
# 2 minutes from nothing on two busy cores): built from an x86 host that has
# the cross compiler (make deps), when the matrix is going to run (not with
# EP_SKIP_QEMU, nor a TEST filter that leaves it out).  Without it those
# rows are SKIP.
qemu-arm64:
	$(Q)if [ "$(HOST_ARCH)" = x86 ] && [ -z "$$EP_SKIP_QEMU" ] && \
		command -v $(or $(CROSS_COMPILE),aarch64-linux-gnu-)gcc >/dev/null; then \
		case qemu_kernel_matrix in *"$(TEST)"*) \
			$(MAKE) --no-print-directory ARCH=arm64 O=build-arm64 all ;; \
		esac; \
	fi

bench: ebpf-profiler workloads
	$(Q)EP_BIN=$(abspath ebpf-profiler) EP_WORKLOADS=$(abspath $(WORKLOADS_DIR)) ci/bench.py

# The C benchmarks, each one program linked with the library:
#   bench-extract: stack-delta extraction speed (BENCH_FILES: files instead
#     of libc and the largest ELF files under /usr/lib and /usr/bin);
#   bench-inline: inline-chain tables from DWARF: build time and size,
#     10,000 lookups cold and warm, for libc's debug file and the largest
#     .debug_info on the machine (BENCH_FILES: files holding DWARF instead).
BENCH_PROGS := $(O)/tests/bench/bench_extract $(O)/tests/bench/bench_inline
$(BENCH_PROGS): %: %.o $(O)/libprofiler.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

bench-extract bench-inline: bench-%: $(O)/tests/bench/bench_%
	$(Q)$< $(BENCH_FILES)

# the daemon's RSS with -inline-frames on a busy host (root)
bench-inline-rss: ebpf-profiler workloads
	$(Q)EP_BIN=$(abspath ebpf-profiler) EP_WORKLOADS=$(abspath $(WORKLOADS_DIR)) \
		EP_SRCDIR=$(CURDIR) ci/bench_inline_rss.py

# per-trace BPF cost (bpf_stats) per workload, map memory
bench-bpf: ebpf-profiler workloads
	$(Q)EP_BIN=$(abspath ebpf-profiler) EP_WORKLOADS=$(abspath $(WORKLOADS_DIR)) \
		EP_SRCDIR=$(CURDIR) ci/bench_bpf.py

# per-trace BPF cost of this build beside another (EP_BIN_BEFORE=path)
bench-ab: ebpf-profiler
	$(Q)EP_BIN=$(abspath ebpf-profiler) EP_SRCDIR=$(CURDIR) ci/bench_ab_bpf.py

# off-CPU profiling's cost: a pipe ping-pong's slowdown and the
# sched_switch program's cost per switch at -off-cpu-threshold 0..1
bench-offcpu: ebpf-profiler workloads
	$(Q)EP_BIN=$(abspath ebpf-profiler) EP_WORKLOADS=$(abspath $(WORKLOADS_DIR)) \
		ci/bench_offcpu.py

# per-sample BPF cost beside bpftrace attached in the same window, per
# workload and configuration; the cost per user frame (BENCH_* in the script)
bench-compare: ebpf-profiler workloads
	$(Q)EP_BIN=$(abspath ebpf-profiler) EP_WORKLOADS=$(abspath $(WORKLOADS_DIR)) \
		EP_SRCDIR=$(CURDIR) ci/bench_compare.py

# the BPF rings drained while a 500 MB file is extracted (EP_BIN_BEFORE:
# another binary to compare, BENCH_REPEAT runs each)
bench-ring: ebpf-profiler workloads
	$(Q)EP_BIN=$(abspath ebpf-profiler) EP_WORKLOADS=$(abspath $(WORKLOADS_DIR)) \
		ci/bench_ring.py

# start-up with a cold and a warm cache, cache warm throughput
bench-cache: ebpf-profiler
	$(Q)EP_BIN=$(abspath ebpf-profiler) ci/bench_cache.py

# the daemon's footprint: RSS with 3,000 sleeping processes of 30
# binaries, CPU at 300 execs/s, start-up with five runtimes (BENCH_* in the
# script)
bench-footprint: ebpf-profiler
	$(Q)EP_BIN=$(abspath ebpf-profiler) ci/bench_footprint.py

fuzz:
	$(Q)$(MAKE) --no-print-directory -f tests/fuzz/fuzz.mk O=$(abspath $(O)) FUZZ_SECONDS=$(FUZZ_SECONDS)

# A quick look at the whole machine: 5 seconds, the hottest stacks.
run: ebpf-profiler
	./ebpf-profiler -duration 5s -samples-per-second 99 -output $(O)/profile.folded
	@echo "hottest stacks (count, then the stack from the root; all in $(O)/profile.folded):"
	@awk '{ n = $$NF; $$NF = ""; print n "\t" $$0 }' $(O)/profile.folded | sort -nr | head -20 | cut -c1-300

deps:
	$(Q)ci/deps.sh

install: ebpf-profiler
	install -D -m 0755 ebpf-profiler $(DESTDIR)/usr/local/bin/ebpf-profiler
	install -D -m 0644 ci/ebpf-profiler.service $(DESTDIR)/etc/systemd/system/ebpf-profiler.service

$(O)/bpf $(O)/gen $(O)/skel:
	$(Q)mkdir -p $@

clean:
	rm -rf $(O) $(BIN)

help:
	@sed -n '3,15p' Makefile

-include $(shell find $(O) -name '*.d' 2>/dev/null)
