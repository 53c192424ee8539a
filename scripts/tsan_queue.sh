#!/usr/bin/env bash
# ThreadSanitizer run of the inbox (the runtime's lock-free queue), with plain
# pthreads: TSan cannot see libgomp's synchronisation, so the OpenMP engine
# itself is not built with TSan.  The harness compiles the very header the
# engine uses (seer_runtime/src/inbox.h).
#   bash scripts/tsan_queue.sh [nodes_per_producer]
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
cc=${CC:-gcc}
$cc -std=c11 -O1 -g -fsanitize=thread -pthread -I seer_runtime/src \
    tests/tsan/inbox_tsan.c -o "$out/inbox_tsan"
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" "$out/inbox_tsan" "${1:-200000}"
