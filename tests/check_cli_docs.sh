#!/usr/bin/env bash
# Every command in user/cli/main.c's table and every long option its code
# parses is documented: "man" checks packaging/topdown.1 (and lints it with
# groff, and its version), "completion" asks packaging/topdown.bash-completion
# what it offers.
#
# A command's options are the getopt_long tables of the file defining
# td_cmd_NAME; where a file holds several commands, the table named
# NAME_options (install_service_options). TD_QUERY_CLI_OPTIONS adds the
# shared filters; td_store_flags_take (or td_query_cli_init) in td_cmd_NAME
# adds --backend and --dsn.
#
# usage: tests/check_cli_docs.sh man|completion   (from the project root)
set -u
what=${1:?usage: tests/check_cli_docs.sh man|completion}
man=packaging/topdown.1
completion=packaging/topdown.bash-completion
missing=0

# "collect td_cmd_collect" per line; version is main.c's own.
commands() {
	sed -n 's/^\t{ "\([a-z-]*\)", \(td_cmd_[a-z_]*\|cmd_version\),.*/\1 \2/p' user/cli/main.c
}

# The file defining the command's entry point $1 (main.c's own
# cmd_version has no options of its own, so no file is needed for it).
file_of() {
	grep -l "^int $1(" user/*/*.c mcp/*.c 2>/dev/null | head -1
}

# The long options (without --) of the command whose entry point is $1,
# defined in the file $2.
options_of() {
	local func=$1 file=$2 table
	table=${func#td_cmd_}_options
	if grep -q "struct option $table\[\]" "$file"; then
		sed -n "/struct option $table\[\]/,/^\t*};/p" "$file"
	else
		sed -n '/struct option [a-z_]*\[\]/,/^\t*};/p' "$file"
	fi | grep -o '{ "[a-z-]*", [a-z]*_argument' | cut -d'"' -f2 | grep -vx help
	if grep -q TD_QUERY_CLI_OPTIONS "$file"; then
		sed -n '/#define TD_QUERY_CLI_OPTIONS/,/^#define TD_QUERY_CLI_SHORT/p' user/cli/query_cli.h |
			grep -o '{ "[a-z-]*"' | cut -d'"' -f2
	fi
	if sed -n "/^int $func(/,/^}/p" "$file" | grep -qE 'td_store_flags_take|td_query_cli_init'; then
		printf '%s\n' backend dsn
	fi
}

# What the completion offers after `topdown WORDS...`.
offered() {
	bash -c 'source "$1"; shift; COMP_WORDS=(topdown "$@"); COMP_CWORD=$#; _topdown
		 printf "%s\n" "${COMPREPLY[@]}"' _ "$completion" "$@"
}

# "--max-overhead" as roff writes it: \-\-max\-overhead
roff_escape() { printf '%s' "$1" | sed 's/-/\\-/g'; }

missing_item() { echo "$1"; missing=$((missing + 1)); }

case $what in
man)
	warnings=$(groff -man -ww -z "$man" 2>&1)
	[ -z "$warnings" ] || missing_item "groff warns about $man: $warnings"
	version=$(sed -n 's/^#define TOPDOWN_VERSION "\(.*\)"$/\1/p' user/core/version.h)
	grep -q "^\.TH TOPDOWN 1 .*\"topdown $version\"" "$man" ||
		missing_item "$man's .TH line does not say topdown $version (user/core/version.h)"
	while read -r name func; do
		grep -qF "$(roff_escape "$name")" "$man" || missing_item "$man lacks the command $name"
		[ "$func" = cmd_version ] && continue
		file=$(file_of "$func")
		[ -n "$file" ] || { missing_item "no file under user/ or mcp/ defines $func"; continue; }
		for opt in $(options_of "$func" "$file"); do
			grep -qF "$(roff_escape "--$opt")" "$man" ||
				missing_item "$man lacks $name --$opt"
		done
	done < <(commands)
	;;
completion)
	while read -r name func; do
		offered '' | grep -qx "$name" || missing_item "$completion does not offer the command $name"
		list=$(offered "$name" --)
		[ "$func" = cmd_version ] && continue
		file=$(file_of "$func")
		[ -n "$file" ] || { missing_item "no file under user/ or mcp/ defines $func"; continue; }
		for opt in $(options_of "$func" "$file"); do
			grep -qx -- "--$opt" <<<"$list" || missing_item "$completion does not offer $name --$opt"
		done
	done < <(commands)
	;;
*)
	echo "usage: tests/check_cli_docs.sh man|completion" >&2
	exit 2
	;;
esac
[ "$(commands | wc -l)" -gt 5 ] || missing_item "found no commands in user/cli/main.c: did its table change shape?"
echo "$what: $missing missing"
[ "$missing" -eq 0 ]
