#!/usr/bin/env bash
# The pprof export read by decoders that share no code with ours: gzip(1)
# for the compression and protobuf's own C++ parser (protoc-c --decode,
# which is protoc's command line) against user/render/profile.proto. The
# profile is tests/test_pprof.c's sample, left behind through TD_PPROF_OUT.
#
# usage: tests/check_pprof.sh [BUILD_DIR]   (from the project root)
set -u
out=${1:-build}
command -v protoc-c >/dev/null || { echo "protoc-c missing: make deps installs protobuf-c-compiler"; exit 77; }
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
TD_PPROF_OUT=$dir "$out/tests/test_pprof" >"$dir/log" 2>&1 || { cat "$dir/log"; echo "$out/tests/test_pprof failed"; exit 1; }
gzip -t "$dir/sample.pb.gz" || { echo "sample.pb.gz is not valid gzip"; exit 1; }
text=$(gzip -dc "$dir/sample.pb.gz" |
	protoc-c --decode=perftools.profiles.Profile --proto_path=user/render profile.proto) ||
	{ echo "protoc could not decode the profile as perftools.profiles.Profile"; exit 1; }

bad=0
expect() { # what, got, want
	[ "$2" = "$3" ] || { echo "$1: $2, expected $3"; bad=$((bad + 1)); }
}
expect "samples" "$(grep -c '^sample {' <<<"$text")" 4
expect "sum of the sample values" "$(awk '/^  value:/ { s += $2 } END { print s }' <<<"$text")" 79
expect "locations" "$(grep -c '^location {' <<<"$text")" 6
expect "functions" "$(grep -c '^function {' <<<"$text")" 4
expect "mappings" "$(grep -c '^mapping {' <<<"$text")" 3
expect "first string" "$(grep -m1 '^string_table:' <<<"$text")" 'string_table: ""'
for s in main hot schedule '\[unknown\]' app.c hot.c app libjit.so '\[kernel\]' thread tid pid io_thd_0 cpu-clock; do
	grep -q "^string_table: \"$s\"\$" <<<"$text" || { echo "string table lacks \"$s\""; bad=$((bad + 1)); }
done
echo "pprof: protoc decoded $(wc -c <"$dir/sample.pb.gz") gzipped bytes, $bad wrong"
[ $bad -eq 0 ]
