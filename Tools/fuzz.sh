#!/usr/bin/env bash
# Fuzzes one of Strata's decoders of outside input with libFuzzer.
#
#   Tools/fuzz.sh TARGET SECONDS   fuzz TARGET (frame, request, predicate,
#                                  model, binary-store, value) for SECONDS
#   Tools/fuzz.sh all SECONDS      each target in turn, SECONDS each
#   Tools/fuzz.sh seed             (re)write the seed corpus from StrataFuzzing.FuzzSeeds
#   Tools/fuzz.sh replay           run every corpus file through its target, no fuzzer
#
# The drivers are built in Fuzz/ with -sanitize=fuzzer,address (release),
# apart from the main build. Inputs the fuzzer finds are kept in
# Fuzz/.work/TARGET (not committed); a crashing input is written to
# Fuzz/Artifacts/TARGET/ and, once fixed, belongs in Fuzz/Corpus/TARGET/
# (committed), which the test suite replays. Each run appends its figures
# to Fuzz/runs.tsv (committed): target, date, seconds, executions,
# coverage, features, crashes.
#
# STRATA_FUZZ_BUILD=0 runs the drivers as last built, without rebuilding:
# for long background runs while the main package's sources are edited
# (a build from a half-edited tree would fail or fuzz the wrong code).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
targets="frame request predicate model binary-store value"

usage() { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ $# -ge 1 ] || usage

case "$1" in
  seed)
    STRATA_WRITE_SEEDS=1 swift test --filter 'CorpusReplayTests/seedsAreCommitted'
    exit 0 ;;
  replay)
    swift test --filter CorpusReplayTests
    exit 0 ;;
  all)
    [ $# -eq 2 ] || usage
    for t in $targets; do "$0" "$t" "$2"; done
    exit 0 ;;
esac

target=$1
seconds=${2:-60}
case " $targets " in *" $target "*) ;; *) echo "unknown target '$target' (one of: $targets)" >&2; exit 2 ;; esac

# SwiftPM plans a path dependency's sources once: a file added to the main
# package since would be missed without the manifest looking changed.
if [ "${STRATA_FUZZ_BUILD:-1}" != 0 ]; then
  touch Fuzz/Package.swift
  (cd Fuzz && swift build -c release --product "fuzz-$target" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library 2>&1 | tail -3)
fi
binary=$(cd Fuzz && swift build -c release --show-bin-path -Xswiftc -sanitize=fuzzer,address)/fuzz-$target
[ -x "$binary" ] || { echo "no $binary: build it first (without STRATA_FUZZ_BUILD=0)" >&2; exit 2; }

mkdir -p "Fuzz/.work/$target" "Fuzz/Artifacts/$target"
log=$(mktemp)
set +e
# ASan: no leak report at exit (the stores and caches live for the
# process), and libFuzzer's own RSS limit governs memory.
ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 \
  "$binary" "Fuzz/.work/$target" "Fuzz/Corpus/$target" \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=65536 \
  -artifact_prefix="Fuzz/Artifacts/$target/" -print_final_stats=1 2>&1 | tee "$log" | grep -E '^#[0-9]+.*(pulse|DONE)|ERROR|==[0-9]+==|fuzz finding|Test unit written' | tail -20
status=${PIPESTATUS[0]}
set -e
execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
cov=$(grep -oE '^#[0-9]+.*cov: [0-9]+' "$log" | tail -1 | grep -oE 'cov: [0-9]+' | grep -oE '[0-9]+' || echo 0)
ft=$(grep -oE '^#[0-9]+.*ft: [0-9]+' "$log" | tail -1 | grep -oE 'ft: [0-9]+' | grep -oE '[0-9]+' || echo 0)
crashes=$(ls "Fuzz/Artifacts/$target" | wc -l)
[ -f Fuzz/runs.tsv ] || printf 'target\tdate\tseconds\texecutions\tcoverage\tfeatures\tartifacts\n' > Fuzz/runs.tsv
printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$target" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$seconds" "${execs:-0}" "${cov:-0}" "${ft:-0}" "$crashes" >> Fuzz/runs.tsv
total=$(awk -F'\t' -v t="$target" '$1 == t { s += $4 } END { print s + 0 }' Fuzz/runs.tsv)
echo "fuzz $target: $execs executions this run, $total in all (Fuzz/runs.tsv); coverage $cov, features $ft; artifacts: $crashes (Fuzz/Artifacts/$target)"
rm -f "$log"
exit "$status"
