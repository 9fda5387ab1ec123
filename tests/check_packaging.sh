#!/usr/bin/env bash
# The installed forms of topdown, each in a scratch directory:
#   install BUILD_DIR  `make install` lays out every file, the installed
#                      binary runs, and the installed unit template is the
#                      one the binary embeds
#   deb BUILD_DIR      packaging/deb/build.sh makes a package that installs
#                      (dpkg -i when $CI is set, else dpkg -x into a scratch
#                      root) and runs `topdown version`
#   rpm                packaging/rpm/topdown.spec parses (rpmspec -P), carries
#                      the version of user/core/version.h, and, where rpmbuild
#                      exists, builds from the tracked files with Debian's
#                      libraries standing in for the BuildRequires
# Exit 0: passed; 77: skipped (the last line says why); else failed.
#
# usage: tests/check_packaging.sh install|deb|rpm [BUILD_DIR]   (from the project root)
set -euo pipefail
what=${1:?usage: tests/check_packaging.sh install|deb|rpm [BUILD_DIR]}
out=${2:-build}
version=$(sed -n 's/^#define TOPDOWN_VERSION "\(.*\)"$/\1/p' user/core/version.h)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

fail() { echo "$*"; exit 1; }
skip() { echo "$*"; exit 77; }

# `topdown version` of binary must name user/core/version.h's version.
check_version() {
	local said
	said=$("$1" version) || fail "$1 version failed"
	[ "$said" = "topdown $version" ] || fail "$1 says '$said', user/core/version.h says $version"
}

check_install() {
	local root=$scratch/root unit_part template=$scratch/root/usr/local/share/topdown/topdown-agent.service.in
	make --no-print-directory OUT="$out" DESTDIR="$root" install >/dev/null
	for file in bin/topdown:755 share/man/man1/topdown.1:644 \
		share/bash-completion/completions/topdown:644 \
		share/topdown/topdown-agent.service.in:644 share/doc/topdown/LICENSE:644; do
		[ -f "$root/usr/local/${file%:*}" ] || fail "make install did not install /usr/local/${file%:*}"
		[ "$(stat -c %a "$root/usr/local/${file%:*}")" = "${file#*:}" ] ||
			fail "/usr/local/${file%:*} has mode $(stat -c %a "$root/usr/local/${file%:*}"), not ${file#*:}"
	done
	check_version "$root/usr/local/bin/topdown"
	# The unit install-service writes is the installed template with its
	# fields filled in: every other line is the same, in the same order.
	unit_part=$("$root/usr/local/bin/topdown" install-service --system-wide --preview |
		sed -n '2,/^# .*agent.env$/p' | sed '$d')
	diff <(grep -vE '@[A-Z_]+@' "$template") \
		<(grep -vE '^(ExecStart|EnvironmentFile|CapabilityBoundingSet)=' <<<"$unit_part") ||
		fail "the installed template and the unit install-service writes differ (above)"
}

check_deb() {
	local deb contents had_topdown=no
	deb=$(packaging/deb/build.sh "$out" | tail -1)
	[ -f "$deb" ] || fail "packaging/deb/build.sh made no package"
	contents=$(dpkg-deb --contents "$deb")
	for path in ./usr/bin/topdown ./usr/share/man/man1/topdown.1.gz \
		./usr/share/bash-completion/completions/topdown \
		./usr/share/topdown/topdown-agent.service.in ./usr/share/doc/topdown/copyright; do
		grep -q " $path\$" <<<"$contents" || fail "$deb lacks $path"
	done
	[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "$deb's Version is not $version"
	dpkg-deb -f "$deb" Depends | grep -q libbpf1 || fail "$deb does not depend on libbpf1"
	if [ -n "${CI:-}" ]; then
		# A fresh CI machine: the real thing, then leave it as it was.
		dpkg-query -W topdown >/dev/null 2>&1 && had_topdown=yes
		dpkg -i "$deb" >/dev/null || fail "dpkg -i $deb failed"
		check_version /usr/bin/topdown
		[ $had_topdown = yes ] || dpkg -P topdown >/dev/null
	else
		dpkg -x "$deb" "$scratch/root"
		check_version "$scratch/root/usr/bin/topdown"
	fi
}

check_rpm() {
	local spec=packaging/rpm/topdown.spec top=$scratch/rpmbuild rpm
	command -v rpmspec >/dev/null || skip "rpmspec is not installed (make deps installs rpm)"
	rpmspec -P "$spec" >/dev/null || fail "rpmspec -P $spec failed"
	[ "$(rpmspec -q --srpm --qf '%{version}' "$spec")" = "$version" ] ||
		fail "$spec's Version is not $version (user/core/version.h)"
	if ! command -v rpmbuild >/dev/null || ! command -v rpm2archive >/dev/null; then
		echo "rpmbuild or rpm2archive is missing: only the spec's syntax was checked"
		return 0
	fi
	if ! git rev-parse --git-dir >/dev/null 2>&1; then
		echo "not a git checkout: only the spec's syntax was checked"
		return 0
	fi
	mkdir -p "$top/SOURCES" "$scratch/root"
	git ls-files | tar -czf "$top/SOURCES/topdown-$version.tar.gz" --transform "s,^,topdown-$version/," -T -
	nice rpmbuild -bb --nodeps --define "_topdir $top" --define "debug_package %{nil}" "$spec" \
		>"$scratch/rpmbuild.log" 2>&1 || { tail -30 "$scratch/rpmbuild.log"; fail "rpmbuild failed"; }
	rpm=$(find "$top/RPMS" -name "topdown-$version-*.rpm" | head -1)
	[ -n "$rpm" ] || fail "rpmbuild made no package"
	rpm2archive - <"$rpm" | tar -xz -C "$scratch/root"
	check_version "$scratch/root/usr/bin/topdown"
	[ -f "$scratch/root/usr/share/licenses/topdown/LICENSE" ] || fail "$rpm lacks the license"
}

case $what in
install) check_install ;;
deb) check_deb ;;
rpm) check_rpm ;;
*) fail "usage: tests/check_packaging.sh install|deb|rpm [BUILD_DIR]" ;;
esac
echo "$what: ok"
