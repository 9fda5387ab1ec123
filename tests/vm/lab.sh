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
# usage: tests/vm/lab.sh BUILD_DIR [SUITE...]   (as root; SUITE: bullseye bookworm bookworm-backports)
set -u
out=$(realpath "${1:-build}")
shift $(($# > 0))
suites=${*:-bullseye bookworm bookworm-backports}
lab=$out/vm
apt_dir=$lab/apt
here=$(dirname "$(realpath "$0")")
failures=0

die() { echo "lab: $*"; exit 1; }
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing: make deps installs qemu-system-x86"
command -v cpio >/dev/null || die "cpio is missing: make deps installs it"
[ -x "$out/topdown" ] && [ -x "$out/td-workload" ] || die "no $out/topdown or td-workload: run make first"

# The host's Debian mirror, from its deb822 or one-line sources.
mirror() {
	{ sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources 2>/dev/null
	  sed -n 's/^deb \(\[[^]]*\] \)\?\([^ ]*\) .*/\2/p' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null
	} | tr ' ' '\n' | grep -v security | grep -m1 '/debian/\?$'
}

apt_lab() { # apt-get or apt-cache with the lab's own sources and state
	local tool=$1
	shift
	"$tool" -q -o Dir::Etc::sourcelist="$apt_dir/sources.list" -o Dir::Etc::sourceparts=/nonexistent \
		-o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache" \
		-o Dir::State::status=/var/lib/dpkg/status -o APT::Get::List-Cleanup=0 "$@"
}

prepare_apt() {
	local uri
	[ -s "$apt_dir/lists/.updated" ] && return 0
	uri=$(mirror) || true
	[ -n "$uri" ] || die "cannot find the host's Debian mirror in /etc/apt/sources.list*"
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
	for suite in bullseye bookworm bookworm-backports; do
		echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite main"
	done >"$apt_dir/sources.list"
	apt_lab apt-get update >"$apt_dir/update.log" 2>&1 || { cat "$apt_dir/update.log"; die "apt-get update of the lab's suites failed"; }
	date >"$apt_dir/lists/.updated"
}

# The newest kernel image package of suite that the mirror serves whole,
# unpacked under $lab/kernels/SUITE; prints the vmlinuz path.
fetch_kernel() {
	local suite=$1 dir=$lab/kernels/$1 abi pkg
	if [ -f "$dir/vmlinuz" ]; then echo "$dir/vmlinuz"; return 0; fi
	abi=$(apt_lab apt-cache show "linux-image-amd64/$suite" 2>/dev/null |
		sed -n 's/^Depends: .*\(linux-image-[0-9][^ ,]*-amd64\).*/\1/p' | sort -V | tail -1)
	[ -n "$abi" ] || { echo "no linux-image-amd64 in $suite" >&2; return 1; }
	mkdir -p "$dir/pkg"
	# The security suite's newest may be missing from the mirror: older versions then.
	for version in $(apt_lab apt-cache madison "$abi" | awk '{print $3}') \
		       $(apt_lab apt-cache madison "${abi%-amd64}-amd64-unsigned" | awk '{print $3}'); do
		for pkg in "$abi" "${abi%-amd64}-amd64-unsigned"; do
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
	(cd "$dir/pkg" && apt_lab apt-get download busybox-static) >/dev/null 2>&1 || die "cannot download busybox-static"
	dpkg-deb -x "$dir"/pkg/*.deb "$dir/root"
	cp "$dir/root/bin/busybox" "$dir/busybox"
	rm -rf "$dir/pkg" "$dir/root"
}

# One initramfs for every kernel: busybox, topdown and the libraries it
# links (at their host paths), the workload, and the checks as /init.
build_initramfs() {
	local root=$lab/initramfs img=$lab/initramfs.cpio.gz
	[ "$img" -nt "$out/topdown" ] && [ "$img" -nt "$here/init.sh" ] && return 0
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,root,lab}
	cp "$lab/busybox/busybox" "$root/bin/busybox"
	for applet in $("$root/bin/busybox" --list); do
		[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
	done
	cp "$out/topdown" "$out/td-workload" "$root/lab/"
	for lib in $(ldd "$out/topdown" "$out/td-workload" | grep -o '/[^ :]* ' | sort -u); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
	cp "$here/init.sh" "$root/init"
	chmod +x "$root/init"
	(cd "$root" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$img"
}

boot() { # SUITE VMLINUZ: the guest's TD-RESULT lines on stdout
	local suite=$1 kernel=$2 log=$lab/boot-$1.log
	timeout 600 qemu-system-x86_64 -accel tcg -m 1024 -smp 2 -nographic -no-reboot \
		-kernel "$kernel" -initrd "$lab/initramfs.cpio.gz" \
		-append "console=ttyS0 panic=-1 quiet" >"$log" 2>&1
	tr -d '\r' <"$log" | grep -ao 'TD-RESULT .*'
}

prepare_apt
fetch_busybox
build_initramfs
echo "| kernel suite | kernel | check | result | detail |"
echo "| --- | --- | --- | --- | --- |"
for suite in $suites; do
	if ! kernel=$(fetch_kernel "$suite"); then
		echo "| $suite | - | boot | fail | no kernel image could be fetched |"
		failures=$((failures + 1))
		continue
	fi
	results=$(boot "$suite" "$kernel")
	if [ -z "$results" ]; then
		echo "| $suite | - | boot | fail | no result from the guest (see $lab/boot-$suite.log) |"
		failures=$((failures + 1))
		continue
	fi
	release=$(sed -n 's/^TD-RESULT kernel ok //p' <<<"$results")
	while read -r _ name status detail; do
		[ "$name" = kernel ] || [ "$name" = done ] && continue
		echo "| $suite | ${release:-?} | $name | $status | $detail |"
		[ "$status" = ok ] || failures=$((failures + 1))
	done <<<"$results"
	grep -q '^TD-RESULT done' <<<"$results" || { echo "| $suite | ${release:-?} | finish | fail | the checks did not finish (see $lab/boot-$suite.log) |"; failures=$((failures + 1)); }
done
[ "$failures" -eq 0 ] || { echo "lab: $failures checks failed"; exit 1; }
echo "lab: every check passed on $suites"
