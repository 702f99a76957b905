#!/bin/bash
# The GPT example's fit, before and after a change, alternated: 2 rounds x (before, after).
# Usage: BEFORE=<checkout of the old commit> AFTER=<this checkout> bash benchmarks/gpt_before_after.sh
# (the figures of BENCHMARKS.md's issue-38 table: BEFORE a worktree of 5602dcb)
for round in 1 2; do
  for side in before after; do
    repo=${BEFORE:?set BEFORE}; [ $side = after ] && repo=${AFTER:-$(pwd)}
    timeout 900 python $repo/benchmarks/gpt_speed.py --systems fit --replica-counts 1,2 --precisions float32 \
      --repeats 1 --steps 10 --warmup 3 --threads 1 --out /tmp/gpt_${side}_${round}.md > /tmp/gpt_${side}_${round}.log 2>&1
    echo "$side $round rc=$? $(date +%T) load=$(cut -d' ' -f1 /proc/loadavg)"
  done
done
