# arm64: the same sources built for aarch64 with Debian's cross toolchain,
# against a sysroot of Debian's arm64 packages (cross/sysroot.sh), and the
# unit tests run under qemu-user.
#
#   make test-arm64    deps, the arm64 build, its unit tests under qemu
#   make arm64         the arm64 build only: $(OUT)/arm64/topdown and tests
#
# The BPF object is the same C built with -D__TARGET_ARCH_arm64 against
# vmlinux/arm64/vmlinux.h. The end-to-end tests (tests/test_*_e2e*) load
# BPF programs into the running kernel and are not built here.
# Included by the main Makefile, which defines OUT, TEST_SRCS,
# DEB_PACKAGES, DEB_ARCHS and CROSS_BUILDS first.

# On an arm64 host the native build is the arm64 build: nothing to cross.
ifneq ($(shell uname -m),aarch64)
DEB_PACKAGES += gcc-aarch64-linux-gnu qemu-user qemu-system-arm
DEB_ARCHS += arm64
CROSS_BUILDS += arm64
endif

ARM64_OUT := $(OUT)/arm64
ARM64_SYSROOT := $(abspath $(ARM64_OUT)/sysroot)
CROSS_COMPILE ?= aarch64-linux-gnu-
QEMU_AARCH64 ?= qemu-aarch64

# The libraries the build links and the tests use, as arm64 -dev
# packages; cross/sysroot.sh adds what they depend on.
ARM64_SYSROOT_PACKAGES := libc6-dev libbpf-dev libelf-dev libdw-dev zlib1g-dev libpfm4-dev \
	libjansson-dev libsqlite3-dev libpq-dev libcmocka-dev libprotobuf-c-dev libmicrohttpd-dev \
	libncurses-dev

ARM64_TESTS := $(patsubst tests/%.c,$(ARM64_OUT)/tests/%,$(filter-out %_e2e.c,$(TEST_SRCS)))

.PHONY: arm64 test-arm64

# The stamp lies outside the sysroot, which the script replaces as a whole.
$(ARM64_OUT)/sysroot.stamp: cross/sysroot.sh cross/arm64.mk
	cross/sysroot.sh arm64 $(ARM64_SYSROOT) $(ARM64_SYSROOT_PACKAGES)
	@touch $@

# The tests that run the binary exec TD_TOPDOWN, and without binfmt_misc
# (often missing in containers) the kernel cannot run an arm64 program:
# this script puts qemu in front of it.
$(ARM64_OUT)/topdown-qemu: cross/arm64.mk
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec %s -L %s %s "$$@"\n' '$(QEMU_AARCH64)' '$(ARM64_SYSROOT)' \
		'$(abspath $(ARM64_OUT)/topdown)' >$@
	chmod +x $@

# A make of its own: the pkg-config flags are read when make starts, and
# here they must come from the sysroot.
arm64: $(ARM64_OUT)/sysroot.stamp $(ARM64_OUT)/topdown-qemu
	@PKG_CONFIG_SYSROOT_DIR=$(ARM64_SYSROOT) \
	 PKG_CONFIG_LIBDIR=$(ARM64_SYSROOT)/usr/lib/aarch64-linux-gnu/pkgconfig:$(ARM64_SYSROOT)/usr/share/pkgconfig \
	 $(MAKE) --no-print-directory ARCH=arm64 OUT=$(ARM64_OUT) \
		CC="$(CROSS_COMPILE)gcc --sysroot=$(ARM64_SYSROOT)" \
		$(ARM64_OUT)/topdown $(ARM64_OUT)/td-workload $(ARM64_OUT)/td-hold-counters $(ARM64_TESTS)

test-arm64: deps
	@$(MAKE) --no-print-directory arm64
	QEMU_AARCH64=$(QEMU_AARCH64) ./tests/run.sh $(OUT) arm64
