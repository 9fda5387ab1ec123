#!/usr/bin/env bash
# The agent's unit on a real systemd: a Debian 12 (bookworm) guest, x86-64,
# booted under qemu's TCG emulator (a nested KVM guest hangs at boot) with
# systemd as PID 1, where tests/vm/systemd_guest.sh installs the project's
# .deb and drives `topdown install-service`, systemctl, journalctl and
# `topdown uninstall-service`. It prints one "TD-RESULT name ok|fail detail"
# line per check on the serial console; this script prints them as a
# table and fails on any failure.
#
# The root file system is made once with debootstrap (minbase, systemd,
# Debian's bookworm kernel and the libraries the .deb depends on) and
# written into an ext4 image with `mke2fs -d` (no loop mount). debootstrap
# itself is downloaded with apt-get and unpacked under BUILD_DIR/vm, never
# installed; the mirror is the host's own (tests/vm/apt.sh), read at run
# time. The guest boots the kernel and initrd that Debian's own packages
# made in that root (initramfs-tools: virtio_blk and ext4 are modules).
# Everything is cached under BUILD_DIR/vm/systemd and the root image is
# booted with snapshot=on, never written: a second run needs no network.
# The .deb, the workload and the guest's script reach the guest on a
# second, read-only disk made for each run.
#
# usage: tests/vm/systemd.sh BUILD_DIR   (as root, from the project root)
set -u
out=$(realpath "${1:-build}")
arch=amd64
lab=$out/vm/systemd
apt_dir=$out/vm/$arch/apt # the kernel lab's apt state, shared
here=$(dirname "$(realpath "$0")")
# What the image is made of; a change here (or in the .deb's Depends) makes it again.
recipe="bookworm minbase systemd systemd-sysv linux-image-amd64 getty-masked td-lab.service v1"

die() { echo "lab: $*"; exit 1; }
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing: make deps installs qemu-system-x86"
command -v mke2fs >/dev/null || die "mke2fs is missing: install e2fsprogs"
command -v wget >/dev/null || die "wget is missing (debootstrap downloads with it): make deps installs it"
[ -x "$out/topdown" ] && [ -x "$out/td-workload" ] || die "no $out/topdown or td-workload: run make first"

. "$here/apt.sh"

# debootstrap, unpacked under $lab/debootstrap; its own scripts found through DEBOOTSTRAP_DIR.
fetch_debootstrap() {
	local dir=$lab/debootstrap
	[ -x "$dir/root/usr/sbin/debootstrap" ] && return 0
	rm -rf "$dir"
	mkdir -p "$dir/pkg"
	(cd "$dir/pkg" && apt_lab apt-get download debootstrap/bookworm) >/dev/null 2>&1 || die "cannot download debootstrap"
	dpkg-deb -x "$dir"/pkg/*.deb "$dir/root"
	rm -rf "$dir/pkg"
}

# The guest's own unit: mounts the run's disk and runs its script, whose
# lines go to the serial console (and the journal).
write_lab_unit() {
	local root=$1
	cat >"$root/etc/systemd/system/td-lab.service" <<'EOF'
[Unit]
Description=topdown lab checks (tests/vm/systemd.sh)
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/bin/sh -c 'mkdir -p /lab && mount -o ro /dev/vdb /lab && exec /lab/systemd_guest.sh'
StandardOutput=journal+console
StandardError=journal+console
TimeoutStartSec=infinity

[Install]
WantedBy=multi-user.target
EOF
	mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
	ln -sf ../td-lab.service "$root/etc/systemd/system/multi-user.target.wants/td-lab.service"
}

# $lab/root.img with $lab/vmlinuz and $lab/initrd.img beside it, made
# again only when the recipe or the .deb's Depends change.
build_root_image() {
	local deb=$1 root=$lab/rootfs includes stamp size uri
	includes="systemd,systemd-sysv,linux-image-amd64,$(dpkg-deb -f "$deb" Depends | tr -d ' ')"
	stamp="$recipe $includes"
	[ -f "$lab/root.img" ] && [ "$(cat "$lab/root.stamp" 2>/dev/null)" = "$stamp" ] && return 0
	fetch_debootstrap
	uri=$(mirror) || die "cannot find the host's Debian mirror in /etc/apt/sources.list*"
	# a debootstrap that failed may have left its /proc and /sys mounted there
	for mount in proc sys; do mountpoint -q "$root/$mount" && umount -l "$root/$mount"; done
	rm -rf "$root" "$lab/root.img" "$lab/root.stamp"
	echo "lab: debootstrap of bookworm into $root (once; see $lab/debootstrap.log)"
	DEBOOTSTRAP_DIR=$lab/debootstrap/root/usr/share/debootstrap \
		"$lab/debootstrap/root/usr/sbin/debootstrap" --arch=$arch --variant=minbase \
		--include="$includes" bookworm "$root" "$uri" >"$lab/debootstrap.log" 2>&1 ||
		{ tail -20 "$lab/debootstrap.log"; die "debootstrap failed (above)"; }
	echo td-lab >"$root/etc/hostname"
	# No login on the console, no apt timers: nothing but the checks.
	for unit in serial-getty@ttyS0.service getty@tty1.service apt-daily.timer apt-daily-upgrade.timer; do
		ln -sf /dev/null "$root/etc/systemd/system/$unit"
	done
	write_lab_unit "$root"
	cp "$(ls "$root"/boot/vmlinuz-* | head -1)" "$lab/vmlinuz" || die "no kernel in $root/boot"
	cp "$(ls "$root"/boot/initrd.img-* | head -1)" "$lab/initrd.img" || die "no initrd in $root/boot (initramfs-tools did not run?)"
	# room for the .deb, the agent's database and the journal
	size=$(($(du -sm "$root" | cut -f1) + 512))
	mke2fs -q -t ext4 -L td-root -d "$root" "$lab/root.img.new" "${size}M" >/dev/null || die "mke2fs -d $root failed"
	mv "$lab/root.img.new" "$lab/root.img"
	rm -rf "$root"
	echo "$stamp" >"$lab/root.stamp"
}

# The run's disk: the .deb, the workload, the guest's script.
build_run_disk() {
	local deb=$1 dir=$lab/run
	rm -rf "$dir" "$lab/run.img"
	mkdir -p "$dir"
	cp "$deb" "$dir/topdown.deb"
	cp "$out/td-workload" "$here/systemd_guest.sh" "$dir/"
	mke2fs -q -t ext4 -d "$dir" "$lab/run.img" 64M >/dev/null || die "mke2fs -d $dir failed"
}

boot() { # the guest's TD-RESULT lines on stdout
	local log=$lab/boot.log
	timeout 1500 qemu-system-x86_64 -accel tcg,thread=single -m 1024 -smp 2 -nographic -no-reboot \
		-kernel "$lab/vmlinuz" -initrd "$lab/initrd.img" \
		-append "console=ttyS0 root=/dev/vda rw panic=-1 quiet" \
		-drive file="$lab/root.img",format=raw,if=virtio,snapshot=on \
		-drive file="$lab/run.img",format=raw,if=virtio,readonly=on >"$log" 2>&1
	tr -d '\r' <"$log" | grep -ao 'TD-RESULT .*'
}

mkdir -p "$lab"
deb=$(packaging/deb/build.sh "$out" | tail -1) || die "make deb failed"
prepare_apt
build_root_image "$deb"
build_run_disk "$deb"
results=$(boot)
[ -n "$results" ] || die "no result from the guest (see $lab/boot.log)"
failures=0
echo "| guest | kernel | check | result | detail |"
echo "| --- | --- | --- | --- | --- |"
result_rows "| bookworm systemd |" "$lab/boot.log"
release=$(sed -n 's/^TD-RESULT kernel ok //p' <<<"$results")
[ "$failures" -eq 0 ] || { echo "lab: $failures checks failed"; exit 1; }
echo "lab: every check passed under systemd ($release)"
