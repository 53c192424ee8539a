#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The training throughput with the learner on a GPU, in one call of a device machine (many
# cores and a GPU, no network): the wheels it lacks from $WHEELS (default .whl/, carried with
# the tree; pip download, see benchmarks/README.md), this tree built, then
# benchmarks/training_speed.py --device cuda, one run per (task, copies) so that a time limit
# keeps every run that finished. Each run writes $OUT/<task>-<copies>/training_speed.csv;
# $OUT/stamps.txt says when each started and the load then.
#
#   OUT=/tmp/gpu bash benchmarks/device_training_speed.sh            # ~9 min with BUDGET=540
#   OUT=/tmp/gpu WHEELS=none bash benchmarks/device_training_speed.sh --quick   # here, tiny sizes
#
# SEER's env threads are "auto" (STPA's choice, resolved untimed before the timed runs),
# SuperSuit's and PufferLib's single envs 1 thread each (PufferLib's paths where it imports). Without CUDA the learner runs on the CPU (the rows'
# device column says which). The copy counts come first (PCS 64, Aircraft 32), then 8,
# 128 and the rest, each bounded by what is left of BUDGET seconds.
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/device-training-speed}
WHEELS=${WHEELS:-.whl}
BUDGET=${BUDGET:-540}
QUICK=""
[ "${1:-}" = "--quick" ] && QUICK="--quick"
mkdir -p "$OUT"
T0=$(date +%s)
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
stamp() { echo "== $1 at $(( $(date +%s) - T0 ))s, load $(cut -d' ' -f1 /proc/loadavg)" | tee -a "$OUT/stamps.txt"; }

if ls "$WHEELS"/*.whl > /dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$WHEELS"/*.whl \
        || { echo "installing $WHEELS failed"; exit 3; }
    export PYTHONPATH=/tmp/site
fi
python3 setup.py build_ext --inplace -j "$(nproc)" > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 4; }
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD
export STPA_CACHE=$OUT/stpa.json      # a cache of this run's own, empty at its start
rm -f "$STPA_CACHE"
DEVICE=cuda
python3 -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)" || DEVICE=cpu
stamp "built; learner on $DEVICE"
{ nproc; grep -m1 "model name" /proc/cpuinfo; nvidia-smi -L 2> /dev/null
  python3 -c "import torch, numpy; print('torch', torch.__version__, 'numpy', numpy.__version__)"; } | tee "$OUT/machine.txt"

if [ -n "$QUICK" ]; then
    RUNS="pcs:4 aircraft:2"
else
    RUNS="pcs:64 aircraft:32 pcs:8 aircraft:8 pcs:128 aircraft:128 pcs:32 aircraft:64"
fi
for run in $RUNS; do
    task=${run%%:*}; copies=${run##*:}
    budget=$(( $(left) - 5 ))
    if [ "$budget" -lt 30 ]; then stamp "no time left for $task $copies"; break; fi
    stamp "$task $copies copies"
    timeout "$budget" python3 benchmarks/training_speed.py $QUICK --tasks "$task" --copies "$copies" \
        --device "$DEVICE" --env-threads auto \
        --paths seer_sync seer_overlap supersuit supersuit_mp puffer_serial puffer_mp seer_sync_aa \
        --out "$OUT/$task-$copies" 2>&1 | grep -v "run/s" | tail -12
done
stamp done
