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
# kernels instead, on an emulated Neoverse N1 (-cpu neoverse-n1: its real
# MIDR and the kernel's armv8_pmuv3 driver), one vCPU with -icount shift=0
# so that instructions count exactly.
#
# usage: tests/vm/lab.sh BUILD_DIR [SUITE...]   (as root; SUITE: bullseye bookworm bookworm-backports)
set -u
out=$(realpath "${1:-build}")
shift $(($# > 0))
suites=${*:-bullseye bookworm bookworm-backports}
arch=${LAB_ARCH:-amd64}
bin=$out
[ "$arch" = arm64 ] && bin=$out/arm64
lab=$out/vm/$arch
apt_dir=$lab/apt
here=$(dirname "$(realpath "$0")")
failures=0

die() { echo "lab: $*"; exit 1; }
case $arch in
amd64) qemu=(qemu-system-x86_64 -accel tcg -m 1024 -smp 2) console=ttyS0 ;;
arm64) qemu=(qemu-system-aarch64 -accel tcg -M virt -cpu "${LAB_CPU:-neoverse-n1}" -m 1024 -smp 1 -icount shift=0)
       console=ttyAMA0 ;;
*) die "LAB_ARCH is amd64 or arm64, not '$arch'" ;;
esac
command -v "${qemu[0]}" >/dev/null || die "${qemu[0]} is missing: make deps installs qemu-system-x86 (and qemu-system-arm)"
command -v cpio >/dev/null || die "cpio is missing: make deps installs it"
[ -x "$bin/topdown" ] && [ -x "$bin/td-workload" ] || die "no $bin/topdown or td-workload: run make${arch/amd64/} first"

. "$here/apt.sh"

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
	[ "$img" -nt "$bin/topdown" ] && [ "$img" -nt "$here/init.sh" ] && [ "$img" -nt "$0" ] && return 0
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,root,lab}
	cp "$lab/busybox/busybox" "$root/bin/busybox"
	# the applets, asked of busybox itself (through qemu-user when it is arm64)
	for applet in $(${sysroot:+qemu-aarch64} "$root/bin/busybox" --list); do
		[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
	done
	cp "$bin/topdown" "$bin/td-workload" "$root/lab/"
	for lib in $(libraries "$bin/topdown" "$bin/td-workload"); do
		mkdir -p "$(dirname "$root${lib#"$sysroot"}")"
		cp -L "$lib" "$root${lib#"$sysroot"}"
	done
	cp "$here/init.sh" "$root/init"
	chmod +x "$root/init"
	(cd "$root" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$img"
}

boot() { # SUITE VMLINUZ: the guest's TD-RESULT lines on stdout
	local suite=$1 kernel=$2 log=$lab/boot-$1.log
	timeout 900 "${qemu[@]}" -nographic -no-reboot \
		-kernel "$kernel" -initrd "$lab/initramfs.cpio.gz" \
		-append "console=$console panic=-1 quiet" >"$log" 2>&1
	tr -d '\r' <"$log" | grep -ao 'TD-RESULT .*'
}

prepare_apt
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
	results=$(boot "$suite" "$kernel")
	if [ -z "$results" ]; then
		echo "| $suite | $arch | - | boot | fail | no result from the guest (see $lab/boot-$suite.log) |"
		failures=$((failures + 1))
		continue
	fi
	release=$(sed -n 's/^TD-RESULT kernel ok //p' <<<"$results")
	while read -r _ name status detail; do
		[ "$name" = kernel ] || [ "$name" = done ] && continue
		echo "| $suite | $arch | ${release:-?} | $name | $status | $detail |"
		[ "$status" = ok ] || failures=$((failures + 1))
	done <<<"$results"
	grep -q '^TD-RESULT done' <<<"$results" || { echo "| $suite | $arch | ${release:-?} | finish | fail | the checks did not finish (see $lab/boot-$suite.log) |"; failures=$((failures + 1)); }
done
[ "$failures" -eq 0 ] || { echo "lab: $failures checks failed"; exit 1; }
echo "lab: every check passed on $suites"
