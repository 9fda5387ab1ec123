# Sourced by the kernel lab's scripts (tests/vm/lab.sh, tests/vm/systemd.sh):
# how a guest's results become table rows, and Debian's archive reached through the host's own mirror, with the lab's
# own apt sources and state under $apt_dir, for the architecture $apt_arch
# (by default the lab's $arch; QEMU 10 is fetched for the host's own).
# Nothing here installs a package; the mirror's address is read at run time
# and written only under the build directory.

# The host's Debian mirror, from its deb822 or one-line sources.
mirror() {
	{ sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources 2>/dev/null
	  sed -n 's/^deb \(\[[^]]*\] \)\?\([^ ]*\) .*/\2/p' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null
	} | tr ' ' '\n' | grep -v security | grep -m1 '/debian/\?$'
}

apt_arch=${apt_arch:-$arch}
apt_lab() { # apt-get or apt-cache with the lab's own sources and state
	local tool=$1
	shift
	"$tool" -q -o Dir::Etc::sourcelist="$apt_dir/sources.list" -o Dir::Etc::sourceparts=/nonexistent \
		-o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache" \
		-o Dir::State::status=/var/lib/dpkg/status -o APT::Get::List-Cleanup=0 \
		-o APT::Architecture="$apt_arch" -o APT::Architectures::="$apt_arch" "$@"
}

prepare_apt() { # [SUITE...]: the host's mirror for these suites (default: the lab's three)
	local uri suite
	[ -s "$apt_dir/lists/.updated" ] && return 0
	uri=$(mirror) || true
	[ -n "$uri" ] || die "cannot find the host's Debian mirror in /etc/apt/sources.list*"
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
	[ $# -gt 0 ] || set -- bullseye bookworm bookworm-backports
	for suite in "$@"; do
		echo "deb [arch=$apt_arch signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite main"
	done >"$apt_dir/sources.list"
	apt_lab apt-get update >"$apt_dir/update.log" 2>&1 || { cat "$apt_dir/update.log"; die "apt-get update of the lab's suites failed"; }
	date >"$apt_dir/lists/.updated"
}

# The rows of one guest's "TD-RESULT NAME STATUS DETAIL" lines ($results),
# each after the columns in $1 ("| suite | machine |"), the kernel's release
# (its "kernel" line) before them; a guest that did not say "done" gets a
# row of its own, naming the boot log $2. Adds the failed rows to $failures.
result_rows() {
	local columns=$1 log=$2 release name status detail
	release=$(sed -n 's/^TD-RESULT kernel ok //p' <<<"$results")
	while read -r _ name status detail; do
		[ "$name" = kernel ] || [ "$name" = done ] && continue
		echo "$columns ${release:-?} | $name | $status | $detail |"
		[ "$status" = ok ] || failures=$((failures + 1))
	done <<<"$results"
	grep -q '^TD-RESULT done' <<<"$results" && return 0
	echo "$columns ${release:-?} | finish | fail | the checks did not finish (see $log) |"
	failures=$((failures + 1))
}
