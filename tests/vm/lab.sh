#!/usr/bin/env bash
# The kernel lab: the x86-64 build on Debian's own kernels, booted under
# qemu's TCG emulator (a nested KVM guest hangs at boot) with a busybox
# initramfs that holds topdown, its libraries and the workload. In each
# guest tests/vm/init.sh runs the core BPF end-to-end checks in both
# program flavours and prints one "TD-RESULT name ok|fail detail" line per
# check; this script prints them as a table and fails on any failure.
#
# Kernels and busybox come from Debian's archive with apt-get download and
# dpkg-deb -x, nothing is installed: the other suites (bullseye,
# bookworm-backports) are reached through an apt sources file made here,
# at run time, from the host's own mirror (no host name is written in the
# project). Everything is cached under BUILD_DIR/vm, so a second run needs
# no network.
#
# LAB_ARCH=arm64 boots the arm64 build (make arm64) on Debian's arm64
# kernels instead, on an emulated Neoverse (-cpu neoverse-n1: its real
# MIDR and the kernel's armv8_pmuv3 driver), one vCPU with -icount shift=0
# so that instructions count exactly. LAB_CPUS lists the CPUs to boot each
# kernel on (default neoverse-n1); one the host's qemu does not know
# (neoverse-n2 and neoverse-v1 need QEMU 8.2 or later) runs on
# qemu-system-arm from bookworm-backports, downloaded and unpacked under
# BUILD_DIR/vm/qemu the same way, never installed. LAB_CHECKS=pmu runs
# only the checks of the emulated PMU (tests/vm/init.sh).
#
# usage: tests/vm/lab.sh BUILD_DIR [SUITE...]   (as root; SUITE: bullseye bookworm bookworm-backports)
set -u
out=$(realpath "${1:-build}")
shift $(($# > 0))
suites=${*:-bullseye bookworm bookworm-backports}
arch=${LAB_ARCH:-amd64}
checks=${LAB_CHECKS:-all}
bin=$out
[ "$arch" = arm64 ] && bin=$out/arm64
lab=$out/vm/$arch
apt_dir=$lab/apt
here=$(dirname "$(realpath "$0")")
failures=0

die() { echo "lab: $*"; exit 1; }
# x86-64 guests take two vCPUs on one host thread (thread=single): with a
# thread per vCPU, a vCPU ran a stale copy of code the kernel had just
# patched as BPF programs attached (an int3 of text_poke_bp in __schedule,
# after the patch was done: "Oops: int3", a panic; 6.12, 2026-11-25). The
# guest still has two CPUs to migrate between.
case $arch in
amd64) qemu=(qemu-system-x86_64 -accel tcg,thread=single -m 1024 -smp 2) console=ttyS0 cpus=qemu64 ;;
arm64) qemu=(qemu-system-aarch64 -accel tcg -M virt -m 1024 -smp 1 -icount shift=0) console=ttyAMA0
       cpus=${LAB_CPUS:-neoverse-n1} ;;
*) die "LAB_ARCH is amd64 or arm64, not '$arch'" ;;
esac
[ "$checks" = all ] || [ "$checks" = pmu ] || die "LAB_CHECKS is all or pmu, not '$checks'"
command -v "${qemu[0]}" >/dev/null || die "${qemu[0]} is missing: make deps installs qemu-system-x86 (and qemu-system-arm)"
command -v cpio >/dev/null || die "cpio is missing: make deps installs it"
[ -x "$bin/topdown" ] && [ -x "$bin/td-workload" ] || die "no $bin/topdown or td-workload: run make${arch/amd64/} first"

. "$here/apt.sh"

# qemu-system-aarch64 for a CPU the host's qemu does not know: QEMU 10
# from bookworm-backports, for the host's architecture, unpacked under
# $out/vm/qemu (its libraries are the ones the host's qemu-system-arm
# already pulled in). Prints the binary's path.
fetch_qemu() {
	local dir=$out/vm/qemu apt_dir=$out/vm/qemu/apt apt_arch
	apt_arch=$(dpkg --print-architecture)
	if [ ! -x "$dir/root/usr/bin/qemu-system-aarch64" ]; then
		prepare_apt bookworm-backports >&2
		mkdir -p "$dir/pkg"
		(cd "$dir/pkg" && apt_lab apt-get download qemu-system-arm/bookworm-backports) >/dev/null 2>&1 ||
			{ echo "cannot download qemu-system-arm from bookworm-backports" >&2; return 1; }
		dpkg-deb -x "$(ls "$dir"/pkg/*.deb | head -1)" "$dir/root"
		rm -rf "$dir/pkg"
	fi
	if ldd "$dir/root/usr/bin/qemu-system-aarch64" | grep -q 'not found'; then
		echo "qemu-system-aarch64 of bookworm-backports lacks libraries on this host:" \
			"$(ldd "$dir/root/usr/bin/qemu-system-aarch64" | grep 'not found' | tr -s '\n\t' ' ')" >&2
		return 1
	fi
	echo "$dir/root/usr/bin/qemu-system-aarch64"
}

# The newest kernel image package of suite that the mirror serves whole,
# unpacked under $lab/kernels/SUITE; prints the vmlinuz path.
fetch_kernel() {
	local suite=$1 dir=$lab/kernels/$1 abi pkg
	if [ -f "$dir/vmlinuz" ]; then echo "$dir/vmlinuz"; return 0; fi
	abi=$(apt_lab apt-cache show "linux-image-$arch/$suite" 2>/dev/null |
		sed -n "s/^Depends: .*\\(linux-image-[0-9][^ ,]*-$arch\\).*/\\1/p" | sort -V | tail -1)
	[ -n "$abi" ] || { echo "no linux-image-amd64 in $suite" >&2; return 1; }
	mkdir -p "$dir/pkg"
	# The security suite's newest may be missing from the mirror: older versions then.
	for version in $(apt_lab apt-cache madison "$abi" | awk '{print $3}') \
		       $(apt_lab apt-cache madison "${abi%-"$arch"}-$arch-unsigned" | awk '{print $3}'); do
		for pkg in "$abi" "${abi%-"$arch"}-$arch-unsigned"; do
			(cd "$dir/pkg" && apt_lab apt-get download "$pkg=$version") >/dev/null 2>&1 && break 2
		done
	done
	ls "$dir"/pkg/*.deb >/dev/null 2>&1 || { echo "cannot download $abi from $suite" >&2; return 1; }
	dpkg-deb -x "$(ls "$dir"/pkg/*.deb | head -1)" "$dir/root"
	cp "$(ls "$dir"/root/boot/vmlinuz-* | head -1)" "$dir/vmlinuz"
	rm -rf "$dir/pkg" "$dir/root"
	echo "$dir/vmlinuz"
}

fetch_busybox() {
	local dir=$lab/busybox
	[ -x "$dir/busybox" ] && return 0
	mkdir -p "$dir/pkg"
	# downloaded and unpacked, never installed: busybox-static:arm64 would replace the host's busybox
	(cd "$dir/pkg" && apt_lab apt-get download "busybox-static:$arch") >/dev/null 2>&1 || die "cannot download busybox-static"
	dpkg-deb -x "$dir"/pkg/*.deb "$dir/root"
	cp "$dir/root/bin/busybox" "$dir/busybox"
	rm -rf "$dir/pkg" "$dir/root"
}

# The shared libraries programs need, with the dynamic loader: ldd's on
# the host's own architecture; for arm64, NEEDED entries resolved in the
# cross build's sysroot (paths printed with the sysroot in front).
sysroot=
[ "$arch" = arm64 ] && sysroot=$out/arm64/sysroot
libraries() {
	if [ -z "$sysroot" ]; then
		ldd "$@" | grep -o '/[^ :]* ' | sort -u
		return
	fi
	local todo=("$@") seen=" " file lib path
	echo "$sysroot/lib/ld-linux-aarch64.so.1"
	while [ ${#todo[@]} -gt 0 ]; do
		file=${todo[0]}
		todo=("${todo[@]:1}")
		for lib in $(readelf -d "$file" 2>/dev/null | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
			[[ $seen == *" $lib "* ]] && continue
			seen+="$lib "
			for dir in lib/aarch64-linux-gnu usr/lib/aarch64-linux-gnu; do
				path=$sysroot/$dir/$lib
				[ -e "$path" ] && { echo "$path"; todo+=("$path"); break; }
			done
		done
	done
}

# One initramfs for every kernel: busybox, topdown and the libraries it
# links (at their host paths), the workload, and the checks as /init.
build_initramfs() {
	local root=$lab/initramfs img=$lab/initramfs.cpio.gz
	[ "$img" -nt "$bin/topdown" ] && [ "$img" -nt "$here/init.sh" ] && [ "$img" -nt "$0" ] &&
		{ [ ! -e "$bin/td-hold-counters" ] || [ "$img" -nt "$bin/td-hold-counters" ]; } && return 0
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,root,lab}
	cp "$lab/busybox/busybox" "$root/bin/busybox"
	# the applets, asked of busybox itself (through qemu-user when it is arm64)
	for applet in $(${sysroot:+qemu-aarch64} "$root/bin/busybox" --list); do
		[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
	done
	cp "$bin/topdown" "$bin/td-workload" "$root/lab/"
	[ -x "$bin/td-hold-counters" ] && cp "$bin/td-hold-counters" "$root/lab/"
	for lib in $(libraries "$bin/topdown" "$bin/td-workload"); do
		mkdir -p "$(dirname "$root${lib#"$sysroot"}")"
		cp -L "$lib" "$root${lib#"$sysroot"}"
	done
	cp "$here/init.sh" "$root/init"
	chmod +x "$root/init"
	(cd "$root" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$img"
}

# SUITE CPU VMLINUZ QEMU: the guest's TD-RESULT lines on stdout. The CPU
# and the checks to run reach the guest's /init on the kernel command line.
boot() {
	local suite=$1 cpu=$2 kernel=$3 log=$lab/boot-$1-$2.log cpu_args=()
	[ "$arch" = arm64 ] && cpu_args=(-cpu "$cpu")
	timeout 900 "$4" "${qemu[@]:1}" "${cpu_args[@]}" -nographic -no-reboot \
		-kernel "$kernel" -initrd "$lab/initramfs.cpio.gz" \
		-append "console=$console panic=-1 quiet td_cpu=$cpu td_checks=$checks" >"$log" 2>&1
	tr -d '\r' <"$log" | grep -ao 'TD-RESULT .*'
}

# The qemu that emulates CPU: the host's, or QEMU 10 (fetch_qemu).
qemu_for() {
	[ "$arch" = amd64 ] && { echo "${qemu[0]}"; return; }
	"${qemu[0]}" -cpu help | grep -qw "$1" && { echo "${qemu[0]}"; return; }
	fetch_qemu
}

prepare_apt bullseye bookworm bookworm-backports
fetch_busybox
build_initramfs
echo "| kernel suite | arch | kernel | check | result | detail |"
echo "| --- | --- | --- | --- | --- | --- |"
for suite in $suites; do
	if ! kernel=$(fetch_kernel "$suite"); then
		echo "| $suite | $arch | - | boot | fail | no kernel image could be fetched |"
		failures=$((failures + 1))
		continue
	fi
	for cpu in $cpus; do
		machine=$arch
		[ "$arch" = arm64 ] && machine="$arch, $cpu"
		if ! emulator=$(qemu_for "$cpu"); then
			echo "| $suite | $machine | - | boot | fail | no qemu emulates $cpu (see above) |"
			failures=$((failures + 1))
			continue
		fi
		results=$(boot "$suite" "$cpu" "$kernel" "$emulator")
		if [ -z "$results" ]; then
			echo "| $suite | $machine | - | boot | fail | no result from the guest (see $lab/boot-$suite-$cpu.log) |"
			failures=$((failures + 1))
			continue
		fi
		result_rows "| $suite | $machine |" "$lab/boot-$suite-$cpu.log"
	done
done
[ "$failures" -eq 0 ] || { echo "lab: $failures checks failed"; exit 1; }
echo "lab: every check passed on $suites ($cpus)"
