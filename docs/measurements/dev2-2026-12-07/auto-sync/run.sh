#!/bin/bash
# "auto" in synchronous PCS training (64 copies, 6 updates): where its time goes.
cd /work/wt-env
. /work/venv/bin/activate
export PYTHONPATH=/work/wt-env
for spec in "1 auto fresh" "1 2 -" "1 1 -" "2 auto fresh" "2 2 -" "2 1 -" "2 auto warm"; do
  set -- $spec
  if [ "$3" = fresh ]; then export STPA_CACHE=/tmp/stpa-diag-$RANDOM.json; fi
  python /work/auto52/diag.py $1 $2 2>/dev/null | tail -1
done
