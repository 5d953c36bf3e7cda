#!/usr/bin/env bash
# Instructions per data segment of the engine pair (benches/pair.rs), tinygram
# and smoltcp, lockstep and batch, counted by cachegrind: each transfer is run
# at two sizes and the difference is divided by the difference in data
# segments, so setup (buffers, handshake) cancels out.
#
# Usage: benches/pair-instructions.sh [SMALL_BYTES LARGE_BYTES]   (needs valgrind)
set -euo pipefail
small=${1:-10000000}
large=${2:-30000000}
command -v valgrind >/dev/null || { echo "error: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
cd "$(dirname "$0")/.."
bin=$(cargo bench -p tinygram-benches --bench pair --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*pair-[^"]*\)".*/\1/p' | tail -1)
[ -x "$bin" ] || { echo "error: could not build the pair benchmark" >&2; exit 1; }
# Prints "<instructions> <data segments>" for one engine:shape and size.
measure() {
    local out
    out=$(TINYGRAM_PAIR_BYTES=$2 TINYGRAM_PAIR_ONE=$1 valgrind --tool=cachegrind --cache-sim=no \
        --cachegrind-out-file=/dev/null "$bin" 2>&1)
    # The last count is the benchmark's own (criterion forks a probe for gnuplot first).
    echo "$(echo "$out" | sed -n 's/.*I *refs: *//p' | tail -1 | tr -d ,) $(echo "$out" | sed -n 's/.* bytes, \([0-9]*\) data segments.*/\1/p')"
}
for which in tinygram:lockstep smoltcp:lockstep tinygram:batch smoltcp:batch; do
    read -r i1 s1 < <(measure "$which" "$small")
    read -r i2 s2 < <(measure "$which" "$large")
    echo "$which: $(( (i2 - i1) / (s2 - s1) )) instructions per data segment ($small and $large bytes)"
done
