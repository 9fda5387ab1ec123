#!/usr/bin/env bash
# The man page and the bash completion against the binary's own option
# tables, both ways. Each command's options are what `topdown COMMAND
# --help` lists: its usage is printed from the table the parser reads
# (user/cli/cli_options.h), one "  --name" line per option, so it is the
# table itself.
#
#   man: packaging/topdown.1 names every command; each option of a
#     command appears in the command's section (.SH COLLECT, ...), in
#     COMMON OPTIONS, or, for a section that refers to FILTERS, in the
#     filters QUERY describes; and every option a section defines (the
#     item line after .TP) is one of that command's. Also: groff lints the
#     page, and its .TH line carries the version.
#   completion: packaging/topdown.bash-completion offers every command,
#     and after `topdown COMMAND --` exactly the command's options.
#
# usage: tests/check_cli_docs.sh man|completion [BUILD_DIR]   (from the project root)
set -u
what=${1:?usage: tests/check_cli_docs.sh man|completion [BUILD_DIR]}
out=${2:-build}
topdown=$out/topdown
man=packaging/topdown.1
completion=packaging/topdown.bash-completion
missing=0

[ -x "$topdown" ] || { echo "no $topdown; run make first"; exit 77; }

# "collect td_cmd_collect" per line; version is main.c's own.
commands() {
	sed -n 's/^\t{ "\([a-z-]*\)", \(td_cmd_[a-z_]*\|cmd_version\),.*/\1 \2/p' user/cli/main.c
}

# The long options (without --) of command $1, from its usage; help is every command's.
options_of() {
	"$topdown" "$1" --help | sed -n 's/^  --\([a-z0-9-]*\).*/\1/p'
	echo help
}

# What the completion offers after `topdown WORDS...`.
offered() {
	bash -c 'source "$1"; shift; COMP_WORDS=(topdown "$@"); COMP_CWORD=$#; _topdown
		 printf "%s\n" "${COMPREPLY[@]}"' _ "$completion" "$@"
}

# The man page's section .SH $1 (upper case), without its heading.
section() {
	awk -v name="$1" '/^\.SH / { on = ($0 == ".SH " name); next } on' "$man"
}

# Whether the roff text on stdin names --$1 (as \-\-$1, and not as a longer option).
names_option() {
	local pattern
	pattern=$(printf '%s' "--$1" | sed 's/-/\\\\-/g')
	grep -qP "$pattern"'(?![a-z0-9]|\\-)'
}

# The options the section on stdin defines: those on the line after each .TP.
defined_options() {
	awk 'prev == ".TP" { print } { prev = $0 }' | grep -oP '\\-\\-[a-z0-9]+(\\-[a-z0-9]+)*' |
		sed 's/\\-/-/g; s/^--//' | sort -u
}

missing_item() { echo "$1"; missing=$((missing + 1)); }

case $what in
man)
	warnings=$(groff -man -ww -z "$man" 2>&1)
	[ -z "$warnings" ] || missing_item "groff warns about $man: $warnings"
	version=$(sed -n 's/^#define TOPDOWN_VERSION "\(.*\)"$/\1/p' user/core/version.h)
	grep -q "^\.TH TOPDOWN 1 .*\"topdown $version\"" "$man" ||
		missing_item "$man's .TH line does not say topdown $version (user/core/version.h)"
	common=$(section "COMMON OPTIONS")
	filters=$(section QUERY)
	while read -r name func; do
		grep -qF "$(printf '%s' "$name" | sed 's/-/\\-/g')" "$man" || missing_item "$man lacks the command $name"
		[ "$func" = cmd_version ] && continue
		upper=$(tr a-z A-Z <<<"$name")
		text=$(section "$upper")
		[ -n "$text" ] || { missing_item "$man has no section .SH $upper"; continue; }
		options=$(options_of "$name")
		[ "$(wc -l <<<"$options")" -gt 1 ] || [ "$name" = version ] ||
			missing_item "topdown $name --help lists no options: did its usage change shape?"
		for opt in $options; do
			names_option "$opt" <<<"$text" && continue
			names_option "$opt" <<<"$common" && continue
			grep -q FILTERS <<<"$text" && names_option "$opt" <<<"$filters" && continue
			missing_item "$man lacks $name --$opt (in .SH $upper or COMMON OPTIONS)"
		done
		for opt in $(defined_options <<<"$text"); do
			grep -qx -- "$opt" <<<"$options" ||
				missing_item "$man describes $name --$opt, which topdown $name does not take"
		done
	done < <(commands)
	;;
completion)
	while read -r name func; do
		offered '' | grep -qx "$name" || missing_item "$completion does not offer the command $name"
		[ "$func" = cmd_version ] && continue
		list=$(offered "$name" --)
		options=$(options_of "$name")
		for opt in $options; do
			grep -qx -- "--$opt" <<<"$list" || missing_item "$completion does not offer $name --$opt"
		done
		for opt in $list; do
			grep -qx -- "${opt#--}" <<<"$options" ||
				missing_item "$completion offers $name $opt, which topdown $name does not take"
		done
	done < <(commands)
	;;
*)
	echo "usage: tests/check_cli_docs.sh man|completion [BUILD_DIR]" >&2
	exit 2
	;;
esac
[ "$(commands | wc -l)" -gt 5 ] || missing_item "found no commands in user/cli/main.c: did its table change shape?"
echo "$what: $missing missing"
[ "$missing" -eq 0 ]
