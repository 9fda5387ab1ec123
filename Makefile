# topdown: one binary, build/topdown, with the BPF object embedded
# through its libbpf skeleton.
#
#   make            build build/topdown
#   make deps       install the Debian packages the build, tests and demo need
#   make demo       deps + build + collect the bundled workload for a few seconds
#   make test       deps + build + the whole suite (unit, ASan/UBSan, fuzz smoke, e2e,
#                   packaging checks, arm64 unit tests under qemu)
#   make test-arm64 deps + the arm64 cross build + its unit tests under qemu (cross/arm64.mk)
#   make test-vm    deps + the kernel lab: the BPF end-to-end checks on Debian's 5.10,
#                   6.1 and 6.12 x86-64 kernels and the arm64 6.1 one on an emulated
#                   Neoverse N1, under qemu (tests/vm/lab.sh); test-vm-full adds arm64 6.12,
#                   the PMU checks on emulated Neoverse N2 and V1 (QEMU 10), and the
#                   agent's unit on a Debian 12 guest under systemd (tests/vm/systemd.sh)
#   make test-repeat N=20 [LOAD=1]
#                   the timing-sensitive end-to-end tests N times, plain and ASan,
#                   with each test's failure count (tests/repeat.sh)
#   make install    the binary, topdown(1), bash completion, the agent's unit
#                   template and the license under DESTDIR/PREFIX (/usr/local)
#   make deb        build/topdown_VERSION_ARCH.deb (packaging/deb/build.sh)

ARCH ?= $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
OUT ?= build
CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG ?= pkg-config

PKGS := libbpf jansson sqlite3 libpq libdw libprotobuf-c zlib libmicrohttpd ncursesw

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
LICENSEDIR ?= $(DATADIR)/doc/topdown
INSTALL ?= install
WARN := -Wall -Wextra -Werror
CFLAGS ?= -O2 -g
CFLAGS += $(WARN) -std=gnu11 -D_GNU_SOURCE $(SANITIZE_FLAGS)
CPPFLAGS += $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
LDLIBS += $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null) -lpfm -lm -lpthread
LDFLAGS += $(SANITIZE_FLAGS)

ifeq ($(SANITIZE),1)
SANITIZE_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
		  -fno-sanitize-recover=undefined
endif

# Rooms and layers (docs/DESIGN.md, "Module map"). Each room compiles
# with the include paths of the rooms it may use, so an upward include
# fails to compile: ROOM_SEES_<room> lists them, the room itself included.
# tests/check_layers.sh proves the rule holds for every pair of rooms.
ROOMS := core http storage kb collect locate query import render agent doctor top mcp cli
ROOM_DIR_core := user/core
ROOM_DIR_http := user/http
ROOM_DIR_storage := storage
ROOM_DIR_kb := kb
ROOM_DIR_collect := user/collect
ROOM_DIR_locate := user/locate
ROOM_DIR_query := user/query
ROOM_DIR_import := user/import
ROOM_DIR_render := user/render
ROOM_DIR_agent := user/agent
ROOM_DIR_doctor := user/doctor
ROOM_DIR_top := user/top
ROOM_DIR_mcp := mcp
ROOM_DIR_cli := user/cli
ROOM_SEES_core := core
ROOM_SEES_http := core http
ROOM_SEES_storage := core storage
ROOM_SEES_kb := core kb
ROOM_SEES_collect := core storage kb collect
ROOM_SEES_locate := core locate
ROOM_SEES_query := core storage kb query
ROOM_SEES_import := core storage kb import
ROOM_SEES_render := core storage kb query render
ROOM_SEES_agent := core http storage kb collect locate query render agent
ROOM_SEES_doctor := core storage kb collect doctor
ROOM_SEES_top := core storage kb collect query render top
ROOM_SEES_mcp := core http storage kb collect locate query render import agent mcp
ROOM_SEES_cli := $(ROOMS)
# The BPF side's shared header and the generated skeletons come with the
# collector: whoever sees collect sees them, nobody below it does.
ROOM_EXTRA_collect := bpf $(OUT)
# The C protoc-c generates from user/render/profile.proto (pprof) comes
# with the renderers; a directory of its own keeps the skeletons out of
# their sight.
PB_OUT := $(OUT)/pb
ROOM_EXTRA_render := $(PB_OUT)
room_includes = $(addprefix -I,$(foreach r,$(ROOM_SEES_$(1)),$(ROOM_DIR_$(r)) $(ROOM_EXTRA_$(r))))
ALL_INCLUDES := $(call room_includes,cli)
$(foreach r,$(ROOMS),$(eval $(OUT)/obj/$(ROOM_DIR_$(r))/%.o: ROOM_INCLUDES = $(call room_includes,$(r))))

# Everything except main.c goes into one static library that the
# binary, the tests and the fuzz targets link.
LIB_SRCS := $(filter-out user/cli/main.c,$(wildcard $(foreach r,$(ROOMS),$(ROOM_DIR_$(r))/*.c)))
LIB_HDRS := $(wildcard $(foreach r,$(ROOMS),$(ROOM_DIR_$(r))/*.h))
LIB_OBJS := $(patsubst %.c,$(OUT)/obj/%.o,$(LIB_SRCS)) $(OUT)/obj/pb/profile.pb-c.o
LIB := $(OUT)/libtopdown.a
BPF_SRCS := $(wildcard bpf/*.bpf.c)
SKELS := $(patsubst bpf/%.bpf.c,$(OUT)/%.skel.h,$(BPF_SRCS))

TEST_SRCS := $(wildcard tests/test_*.c)
TESTS := $(patsubst tests/%.c,$(OUT)/tests/%,$(TEST_SRCS))
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZERS := $(patsubst tests/fuzz/%.c,$(OUT)/fuzz/%,$(FUZZ_SRCS))
WORKLOAD := $(OUT)/td-workload

# curl and prometheus (for its promtool) check the agent's /metrics and the
# MCP server's HTTP transport in tests;
# chromium runs the flame graph's page in tests/browser; tmux drives
# topdown top's screen in tests/check_top.sh; wget is what debootstrap
# downloads with (the kernel lab's systemd guest, tests/vm/systemd.sh);
# libfiu (fiu-utils, libfiu-dev) injects the I/O faults of tests/faults, and
# gdb records the stacks of a fault run that hangs; jq reads collect's JSON
# in tests/check_edge_collect.sh.
DEB_PACKAGES := clang llvm bpftool libbpf-dev libelf-dev libdw-dev zlib1g-dev \
	libpfm4-dev libjansson-dev libsqlite3-dev libpq-dev libcmocka-dev \
	libprotobuf-c-dev protobuf-c-compiler libmicrohttpd-dev libncurses-dev \
	pkg-config make gcc libclang-rt-14-dev valgrind linux-perf \
	postgresql sqlite3 procps systemd rpm groff-base curl prometheus \
	qemu-system-x86 cpio wget chromium tmux fiu-utils libfiu-dev jq gdb
# Foreign architectures apt must know, and the cross builds make test
# runs: cross/arm64.mk adds them. The cross builds fetch their libraries
# into a sysroot (cross/sysroot.sh); nothing of those is installed.
DEB_ARCHS :=
CROSS_BUILDS :=

.PHONY: all deps demo test test-faults test-repeat test-vm test-vm-full unit-tests fuzz bench-tools bench-kb install deb clean
.SECONDARY:
all: $(OUT)/topdown $(WORKLOAD)

# Idempotent: apt-get runs only when a package is missing, or when apt
# has no package lists yet for a foreign architecture.
deps:
	@for arch in $(DEB_ARCHS); do \
		dpkg --print-foreign-architectures | grep -qx $$arch || dpkg --add-architecture $$arch; \
	done
	@missing=$$(for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); \
	unlisted=$$(for arch in $(DEB_ARCHS); do \
		apt-cache show libc6:$$arch >/dev/null 2>&1 || echo $$arch; \
	done); \
	if [ -n "$$missing$$unlisted" ]; then \
		echo "installing:" $$missing $${unlisted:+"(and the package lists of $$unlisted)"}; \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		{ [ -z "$$missing" ] || DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq --no-install-recommends $$missing; }; \
	fi

$(OUT)/topdown: $(OUT)/obj/user/cli/main.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(LIB): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

# The objects that load BPF need the skeletons first.
$(LIB_OBJS) $(OUT)/obj/user/cli/main.o: $(SKELS)

$(OUT)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ROOM_INCLUDES) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

# BPF: CO-RE against the checked-in vmlinux.h of the target arch.
$(OUT)/%.bpf.o: bpf/%.bpf.c bpf/*.h
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) \
		-Ivmlinux/$(ARCH) -Ibpf -Wall -Werror -c $< -o $@
	llvm-strip -g $@

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@

# pprof's messages in C (protobuf-c): generated, never checked in. The
# pattern rule makes both files in one run of protoc-c.
$(PB_OUT)/%.pb-c.c $(PB_OUT)/%.pb-c.h: user/render/%.proto
	@mkdir -p $(@D)
	protoc-c --c_out=$(PB_OUT) --proto_path=user/render $*.proto

$(OUT)/obj/pb/%.o: $(PB_OUT)/%.c $(PB_OUT)/%.h
	@mkdir -p $(@D)
	$(CC) -I$(PB_OUT) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(OUT)/obj/user/render/pprof.o: $(PB_OUT)/profile.pb-c.h

$(WORKLOAD): tests/workload/workload.c
	@mkdir -p $(@D)
	$(CC) -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer $(WARN) -std=gnu11 -D_GNU_SOURCE -o $@ $< -lpthread

# The kernel lab's other monitor: holds PMU counters of CPU 0 (tests/vm/hold_counters.c).
$(OUT)/td-hold-counters: tests/vm/hold_counters.c
	@mkdir -p $(@D)
	$(CC) -O1 $(WARN) -std=gnu11 -D_GNU_SOURCE -o $@ $<

$(OUT)/tests/%: tests/%.c tests/*.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_INCLUDES) $(CPPFLAGS) -Itests $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS) -lcmocka

unit-tests: $(TESTS)

# libFuzzer needs clang; the fuzz build has its own object tree.
FUZZ_OUT := $(OUT)/fuzzlib
$(OUT)/fuzz/%: tests/fuzz/%.c $(LIB_SRCS) $(LIB_HDRS)
	@$(MAKE) --no-print-directory OUT=$(FUZZ_OUT) CC=$(CLANG) \
		SANITIZE_FLAGS="-fsanitize=fuzzer-no-link,address,undefined" $(FUZZ_OUT)/libtopdown.a
	@mkdir -p $(@D)
	$(CLANG) $(ALL_INCLUDES) $(CPPFLAGS) -I$(FUZZ_OUT) -g -O1 -fsanitize=fuzzer,address,undefined \
		-o $@ $< $(FUZZ_OUT)/libtopdown.a $(LDLIBS)

fuzz: $(FUZZERS)

# bench/: the yardstick program for the sched_switch benchmark.
$(OUT)/minimal_reads.bpf.o: bench/minimal_reads.bpf.c bpf/*.h
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) \
		-Ivmlinux/$(ARCH) -Ibpf -Wall -Werror -c $< -o $@
	llvm-strip -g $@

$(OUT)/td-minimal-reads: bench/minimal_reads.c $(OUT)/minimal_reads.skel.h $(LIB)
	$(CC) $(ALL_INCLUDES) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# bench/bench_query.sh: fills stores with synthetic runs.
$(OUT)/td-gen-runs: bench/gen_runs.c $(LIB)
	$(CC) $(ALL_INCLUDES) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# bench/bench_mcp.sh: a client timing the MCP server's answers.
$(OUT)/bench_mcp: bench/bench_mcp.c
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $<

# bench/bench_top.sh: a process of many sleeping threads for topdown top to watch.
$(OUT)/td-many-threads: bench/many_threads.c
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -lpthread

bench-tools: all $(OUT)/td-minimal-reads $(OUT)/td-gen-runs $(OUT)/bench_mcp $(OUT)/td-many-threads

# bench/bench_kb.c: kb load and Top-Down engine speed (docs/BENCHMARKS.md).
$(OUT)/bench_kb: bench/bench_kb.c $(LIB)
	$(CC) $(ALL_INCLUDES) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

bench-kb: $(OUT)/bench_kb
	$(OUT)/bench_kb

# bench/bench_probe.c: the start-up cost of probing the PMU's free counters.
$(OUT)/bench_probe: bench/bench_probe.c $(LIB)
	$(CC) $(ALL_INCLUDES) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# deps first, in its own step: the pkg-config flags above are read when
# make starts, so the build runs in a fresh make once the packages exist.
demo: deps
	@$(MAKE) --no-print-directory all
	./tests/demo.sh $(OUT)

test: deps
	@$(MAKE) --no-print-directory all unit-tests fuzz $(OUT)/td-gen-runs $(CROSS_BUILDS)
	@$(MAKE) --no-print-directory OUT=$(OUT)/asan SANITIZE=1 all unit-tests
	QEMU_AARCH64=$(QEMU_AARCH64) ./tests/run.sh $(OUT)

# The long form of tests/check_faults.sh (docs/FAULTS.md): FAULT_RUNS runs
# under I/O and memory faults per command (import, gc, export, collect,
# agent), FAULT_OOM_RUNS single failed allocations per command (import,
# export, collect) and FAULT_KILLS kills of collect and agent;
# FAULT_SEED replays.
FAULT_RUNS ?= 40
FAULT_OOM_RUNS ?= 150
FAULT_KILLS ?= 100
test-faults: deps
	@$(MAKE) --no-print-directory all
	@rc=0; \
	./tests/faults/io.sh $(OUT) $(FAULT_RUNS) "$(FAULT_SEED)" || rc=1; \
	./tests/faults/oom.sh $(OUT) $(FAULT_OOM_RUNS) "$(FAULT_SEED)" || rc=1; \
	./tests/faults/crash.sh $(OUT) $(FAULT_KILLS) "$(FAULT_SEED)" || rc=1; \
	exit $$rc

test-vm: deps
	@$(MAKE) --no-print-directory all $(CROSS_BUILDS)
	./tests/run.sh $(OUT) vm

# Every kernel of the lab: x86-64 5.10, 6.1, 6.12; arm64 6.1 and 6.12 on Neoverse N1;
# the PMU checks on Neoverse N2 and V1, which need QEMU 10 (tests/vm/lab.sh fetches it);
# and the agent's unit on a Debian 12 guest with systemd as init.
test-vm-full: deps
	@$(MAKE) --no-print-directory all $(CROSS_BUILDS)
	LAB_ARM64_SUITES="bookworm bookworm-backports" LAB_QEMU10_CPUS="neoverse-n2 neoverse-v1" \
		LAB_SYSTEMD=1 ./tests/run.sh $(OUT) vm

N ?= 20
test-repeat: deps
	@$(MAKE) --no-print-directory all unit-tests
	@$(MAKE) --no-print-directory OUT=$(OUT)/asan SANITIZE=1 all unit-tests
	LOAD=$(LOAD) ./tests/repeat.sh $(OUT) $(N) $(REPEAT_TESTS)

install: $(OUT)/topdown
	$(INSTALL) -D -m 0755 $(OUT)/topdown $(DESTDIR)$(BINDIR)/topdown
	$(INSTALL) -D -m 0644 packaging/topdown.1 $(DESTDIR)$(MANDIR)/man1/topdown.1
	$(INSTALL) -D -m 0644 packaging/topdown.bash-completion $(DESTDIR)$(BASHCOMPDIR)/topdown
	$(INSTALL) -D -m 0644 packaging/topdown-agent.service.in \
		$(DESTDIR)$(DATADIR)/topdown/topdown-agent.service.in
	$(INSTALL) -D -m 0644 LICENSE $(DESTDIR)$(LICENSEDIR)/LICENSE

deb: $(OUT)/topdown
	packaging/deb/build.sh $(OUT)

clean:
	rm -rf $(OUT)

# Text files compiled into the library as one NUL-terminated string, the
# symbol $(1): $(call embed_text,SYMBOL,FILES[,PREFIX]) writes the assembly
# for $@, each file preceded by a "PREFIX PATH" line when PREFIX is given
# (the kb names its files so that load errors cite file and line).
# .incbin paths are relative to the project root, where make runs.
define embed_text
	@mkdir -p $(@D)
	@{ printf '\t.section .rodata\n\t.global $(1)\n\t.type $(1), %%object\n$(1):\n'; \
	   for f in $(2); do \
		$(if $(3),printf '\t.ascii "$(3) %s\\n"\n' $$f;) \
		printf '\t.incbin "%s"\n' $$f; \
		$(if $(3),printf '\t.ascii "\\n"\n';) \
	   done; \
	   printf '\t.byte 0\n\t.size $(1), . - $(1)\n'; \
	   printf '\t.section .note.GNU-stack,"",%%progbits\n'; } > $@
endef

$(OUT)/obj/embed/%.o: $(OUT)/embed/%.S
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

# Modules that need build rules of their own keep them beside their code.
-include kb/kb.mk
-include packaging/packaging.mk
-include cross/arm64.mk

-include $(shell find $(OUT)/obj -name '*.d' 2>/dev/null)

# tests/check_layers.sh reads the rooms from here: "ROOM DIR -I..." a line.
.PHONY: print-rooms
print-rooms:
	@$(foreach r,$(ROOMS),echo '$(r) $(ROOM_DIR_$(r)) $(call room_includes,$(r))';)
