#!/usr/bin/env bash
# The layers hold: a room can include every header of the rooms it may
# use and none of the others. Each header is included alone, with exactly
# the include paths the Makefile compiles that room with (make
# print-rooms), so a header of a room above fails to be found, as it would
# in a build. What each room may use is the design's rule (docs/DESIGN.md,
# "Module map"), written out below on its own: a Makefile that let a room
# see more, or less, fails here.
#
# usage: tests/check_layers.sh [CC]   (from the project root)
set -u
cc=${1:-cc}
bad=0 checked=0
rooms=$(make -s --no-print-directory print-rooms) || { echo "make print-rooms failed"; exit 1; }
[ "$(wc -l <<<"$rooms")" -ge 8 ] || { echo "make print-rooms listed too few rooms: $rooms"; exit 1; }

# room: the rooms it may use besides itself.
declare -A may_use=(
	[core]=""
	[http]="core"
	[storage]="core"
	[kb]="core"
	[collect]="core storage kb"
	[locate]="core"
	[query]="core storage kb"
	[import]="core storage kb"
	[render]="core storage kb query"
	[agent]="core http storage kb collect locate query render"
	[doctor]="core storage kb collect"
	[top]="core storage kb collect query render"
	[mcp]="core http storage kb collect locate query render import agent"
	[cli]="*"
)

declare -A dir_of
while read -r room dir _; do dir_of[$room]=$dir; done <<<"$rooms"
for room in "${!may_use[@]}"; do
	[ -n "${dir_of[$room]:-}" ] || { echo "the design names the room $room, which make print-rooms does not list"; bad=$((bad + 1)); }
done

while read -r room dir includes; do
	# The rooms this one may see, as the directories its -I flags name.
	[ -n "${may_use[$room]+set}" ] || { echo "the room $room ($dir) has no rule in tests/check_layers.sh: add what it may use"; bad=$((bad + 1)); continue; }
	for other in "${!dir_of[@]}"; do
		odir=${dir_of[$other]}
		if [ "$other" = "$room" ] || [ "${may_use[$room]}" = "*" ] || [[ " ${may_use[$room]} " == *" $other "* ]]; then
			allowed=1
		else
			allowed=0
		fi
		for h in "$odir"/*.h; do
			[ -e "$h" ] || continue
			# shellcheck disable=SC2086 # the -I list is words
			if printf '#include "%s"\n' "$(basename "$h")" |
				$cc $includes -D_GNU_SOURCE -E -x c - -o /dev/null 2>/dev/null; then
				found=1
			else
				found=0
			fi
			checked=$((checked + 1))
			if [ $allowed = 1 ] && [ $found = 0 ]; then
				echo "$room ($dir) may use $other, but $h does not preprocess with its include paths"
				bad=$((bad + 1))
			elif [ $allowed = 0 ] && [ $found = 1 ]; then
				echo "$room ($dir) must not see $other, but it can include $h"
				bad=$((bad + 1))
			fi
		done
	done
done <<<"$rooms"
[ $checked -gt 100 ] || { echo "only $checked includes checked: are the rooms' headers where print-rooms says?"; exit 1; }
echo "layers: $checked includes checked, $bad wrong"
[ $bad -eq 0 ]
