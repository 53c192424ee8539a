#!/bin/bash
# A/B of the trainers' activation: old tree (torch.tanh) vs new (Tanh), interleaved, A/A from the repeats.
. /work/venv/bin/activate
for r in 1 2; do
  for t in old new; do
    root=/work/main; [ $t = old ] && root=/work/wt-old
    (cd $root && PYTHONPATH=$root python benchmarks/training_speed.py --tasks pcs aircraft --paths seer_sync seer_overlap \
        --copies 64 --updates 6 --out /work/ab/$t$r > /work/ab/$t$r.log 2>&1)
  done
done
echo done
