# Sourced by the kernel lab's scripts (tests/vm/lab.sh, tests/vm/systemd.sh):
# Debian's archive reached through the host's own mirror, with the lab's
# own apt sources and state under $apt_dir, for the architecture $arch.
# Nothing here installs a package; the mirror's address is read at run time
# and written only under the build directory.

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
		-o Dir::State::status=/var/lib/dpkg/status -o APT::Get::List-Cleanup=0 \
		-o APT::Architecture="$arch" -o APT::Architectures::="$arch" "$@"
}

prepare_apt() {
	local uri
	[ -s "$apt_dir/lists/.updated" ] && return 0
	uri=$(mirror) || true
	[ -n "$uri" ] || die "cannot find the host's Debian mirror in /etc/apt/sources.list*"
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
	for suite in bullseye bookworm bookworm-backports; do
		echo "deb [arch=$arch signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite main"
	done >"$apt_dir/sources.list"
	apt_lab apt-get -o APT::Architectures::="$arch" update >"$apt_dir/update.log" 2>&1 || { cat "$apt_dir/update.log"; die "apt-get update of the lab's suites failed"; }
	date >"$apt_dir/lists/.updated"
}
