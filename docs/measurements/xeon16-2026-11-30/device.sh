#!/usr/bin/env bash
# One device run (16-core Xeon): install wheels, build this tree and main before
# this round (.devrun/old, 1ea8a06), then measurements, each bounded by what is left.
set -u
export PYTHONUNBUFFERED=1
T0=$(date +%s)
BUDGET=${BUDGET:-440}
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
stamp() { echo "== $1 at $(( $(date +%s) - T0 ))s, load $(cut -d' ' -f1 /proc/loadavg)"; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 3
export PYTHONPATH=/tmp/site
(python3 setup.py build_ext --inplace -j 16 > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 4; }) &
(cd .devrun/old && python3 setup.py build_ext --inplace -j 16 > /tmp/build_old.log 2>&1 || tail -30 /tmp/build_old.log) &
wait
export PYTHONPATH=/tmp/site:$PWD
export STPA_CACHE=/tmp/stpa_cache.json
stamp built; nproc; grep -m1 "model name" /proc/cpuinfo
python3 -c "import seer_runtime, seer_envs; print('parallel build', seer_runtime.openmp_enabled(), sorted(seer_envs.envs()))"
stamp scale
timeout $(( $(left) - 230 )) python3 .devrun/scale.py --out $OUT --budget 330 2>&1 | cut -c1-400 | tee $OUT/scale.txt | tail -25
stamp waiting_ab
timeout $(( $(left) - 150 )) python3 benchmarks/waiting_ab.py --tree before=.devrun/old --tree after=. --loads 0 4 \
  --work phold16k air4096 pcs32 --threads 1 2 16 --repeats 1 --seconds 1.0 2>&1 | tee $OUT/waiting_ab.txt
stamp contention
timeout $(( $(left) - 60 )) python3 benchmarks/contention.py --quick --busy 0,4,8 2>&1 | tee $OUT/contention.txt | tail -30
stamp dict_step
timeout $(( $(left) - 30 )) python3 benchmarks/dict_step.py --steps 10 --threads 1 2 16 2>&1 | tee $OUT/dict_step.txt | tail -15
stamp vector
timeout $(( $(left) - 3 )) python3 benchmarks/vector_env.py --no-supersuit --steps 20 --rounds 3 2>&1 | tee $OUT/vector_env.txt | tail -15
stamp done
