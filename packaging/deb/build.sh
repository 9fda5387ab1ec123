#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds BUILD_DIR/topdown_VERSION_ARCH.deb from the tree: `make install`
# into a staging root under /usr, the Debian copyright file, the man page
# gzipped (Debian policy), and a DEBIAN/control whose Depends are the
# packages holding the shared libraries the binary links (found with
# objdump, ldd and dpkg-query, so they follow the Makefile's LDLIBS).
# Prints the package's path on its last line.
#
# usage: packaging/deb/build.sh [BUILD_DIR]   (from the project root; `make deb` runs it)
set -euo pipefail
umask 022
out=${1:-build}
version=$(sed -n 's/^#define TOPDOWN_VERSION "\(.*\)"$/\1/p' user/core/version.h)
arch=$(dpkg --print-architecture)
stage=$out/deb/topdown_${version}_$arch
deb=$out/topdown_${version}_$arch.deb

die() { echo "packaging/deb/build.sh: $*" >&2; exit 1; }

[ -n "$version" ] || die "no TOPDOWN_VERSION in user/core/version.h; fix its #define"

# The package owning the library at path; usrmerge puts one file under two
# names, and dpkg knows only the one the package shipped.
package_of() {
	local path=$1 candidate owner
	for candidate in "$path" "/usr$path" "${path#/usr}"; do
		owner=$(dpkg-query -S "$candidate" 2>/dev/null | head -1) || continue
		[ -n "$owner" ] && { echo "${owner%%[:,]*}"; return; }
	done
	die "no installed Debian package holds $path; install the library with apt-get (make deps)"
}

# "libbpf1, libc6, ...": the packages of the libraries the binary NEEDs.
depends() {
	local binary=$1 soname path
	for soname in $(objdump -p "$binary" | awk '$1 == "NEEDED" { print $2 }'); do
		path=$(ldd "$binary" | awk -v lib="$soname" '$1 == lib && $3 ~ /^\// { print $3 }')
		[ -n "$path" ] || die "$binary needs $soname, which ldd cannot find; install it (make deps)"
		package_of "$path"
	done | sort -u | paste -sd, | sed 's/,/, /g'
}

rm -rf "$stage"
make --no-print-directory OUT="$out" DESTDIR="$stage" PREFIX=/usr install >/dev/null
strip --strip-unneeded "$stage/usr/bin/topdown"
gzip -9n "$stage/usr/share/man/man1/topdown.1"

# Debian keeps the license as /usr/share/doc/PACKAGE/copyright.
doc=$stage/usr/share/doc/topdown
{
	echo "topdown: per-thread Top-Down microarchitecture analysis with eBPF."
	echo
	echo "The BPF programs built into /usr/bin/topdown (bpf/ in the source) are"
	echo "licensed LGPL-2.1 OR BSD-2-Clause (see /usr/share/common-licenses/LGPL-2.1);"
	echo "everything else is licensed as follows."
	echo
	cat "$doc/LICENSE"
} >"$doc/copyright"
rm "$doc/LICENSE"

mkdir -p "$stage/DEBIAN"
cat >"$stage/DEBIAN/control" <<EOF
Package: topdown
Version: $version
Architecture: $arch
Maintainer: The topdown authors <maintainers@topdown.invalid>
Section: utils
Priority: optional
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Depends: $(depends "$stage/usr/bin/topdown")
Recommends: systemd
Description: per-thread Top-Down CPU analysis with eBPF
 topdown tells where every pipeline slot of a process goes, per thread:
 Frontend_Bound, Bad_Speculation, Backend_Bound and Retiring, and the
 nodes below them. BPF programs on the scheduler's context switch read the
 hardware counters; labeled runs go to SQLite or PostgreSQL, where query,
 compare and an MCP server read them. \`topdown install-service\` runs the
 collecting agent under a hardened systemd unit.
EOF

dpkg-deb --build --root-owner-group "$stage" "$deb" >/dev/null
echo "$deb"
