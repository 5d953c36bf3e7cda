#!/usr/bin/env bash
# Cache lines of endpoint state each event touches in the many-flow benchmark
# (`tinygram bench sim --flows N`): valgrind's lackey traces every memory
# access of one run, and benches/src/bin/endpoint_lines.rs counts, between two
# writes of the event counter, the lines and bytes of the endpoint table
# (application and engine state; heap buffers, queues and links aside).
#
# It also prints how many endpoints an event touches (the simulator reads the
# next events' endpoints to prefetch them) and the lines of the event's own,
# and how often each 64-byte part of an endpoint is touched;
# ENDPOINT_LINES_GRANULE=8 shows that per 8 bytes, to see which fields are.
#
# Usage: benches/endpoint-lines.sh [FLOWS [REQUESTS]]   (needs valgrind; 300 x 10 takes about 3 minutes)
set -euo pipefail
flows=${1:-300}
requests=${2:-3}
command -v valgrind >/dev/null || { echo "error: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
cd "$(dirname "$0")/.."
cargo build --release -q -p tinygram -p tinygram-benches --bin tinygram --bin endpoint_lines
# The trace and the program's layout lines share stderr, in order; stdout is not needed.
# `--look-ahead on`: the run prefetches the next events' endpoints as the
# simulator does at scale (its rule leaves it off for a few hundred flows,
# whose state fits in the cache), so the count is that of a large run.
valgrind --tool=lackey --trace-mem=yes --log-fd=2 \
    target/release/tinygram bench sim --flows "$flows" --requests "$requests" --memory-layout --look-ahead on \
    2>&1 >/dev/null | target/release/endpoint_lines
