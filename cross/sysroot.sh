#!/usr/bin/env bash
# Builds a sysroot for cross-compiling and for running under qemu-user:
# the given Debian packages of a foreign architecture and everything they
# depend on, fetched with apt-get download and unpacked with dpkg -x.
# Nothing is installed on the host.
#
# usage: cross/sysroot.sh ARCH DIR PACKAGE...
#   e.g. cross/sysroot.sh arm64 build/arm64/sysroot libpq-dev libcmocka-dev
#
# apt must know ARCH (dpkg --add-architecture ARCH; apt-get update), which
# `make deps` sees to. DIR is replaced as a whole, and only once the new
# tree is complete, so an interrupted run leaves no half-made sysroot.
#
# Why not multiarch packages (apt-get install libpq-dev:arm64): some -dev
# packages are not Multi-Arch: same (libpq-dev is one), so installing the
# arm64 one would remove the host's own and break the native build.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 ARCH DIR PACKAGE..." >&2; exit 2; }
arch=$1 dir=$2
shift 2

# The packages and their dependencies, recursively, of ARCH only: virtual
# packages (<name>) and the host's own (no :ARCH suffix) are left out.
# Recommends are not needed to link or to run.
packages=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
		--no-replaces --no-enhances "${@/%/:$arch}" |
	sed -n "s/^\([a-z0-9][a-z0-9.+-]*:$arch\)$/\1/p" | sort -u)
[ -n "$packages" ] || { echo "apt knows no $arch packages; run make deps" >&2; exit 1; }

new=$dir.new
rm -rf "$new" "$dir.debs"
mkdir -p "$new" "$dir.debs"
# As root, apt would drop to its _apt user, which cannot write to DIR.
(cd "$dir.debs" && apt-get download -q -o APT::Sandbox::User="$(id -un)" $packages)
for deb in "$dir.debs"/*.deb; do
	dpkg-deb -x "$deb" "$new"
done
rm -rf "$dir.debs"

# Library links such as usr/lib/<triplet>/libz.so -> /lib/<triplet>/libz.so.1
# are absolute: point them into the sysroot.
find "$new" -type l -lname '/*' | while read -r link; do
	ln -sfnr "$new$(readlink "$link")" "$link" || exit 1
done

rm -rf "$dir"
mv "$new" "$dir"
echo "$dir: $(echo "$packages" | wc -l) $arch packages"
