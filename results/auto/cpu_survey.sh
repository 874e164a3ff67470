#!/bin/bash
# per-scene, per-method CPU timings
B=/work/main/target/release/sweepfan
out=/tmp/auto/cpu_survey.txt
: > $out
for spec in "paper 5000" "paper 100000" "density 1000000" "clusters 1000000" "line-x 100000" "one-point 2000" "mixed-radii 200000" "giant 100000" "wide 1000000"; do
  set -- $spec
  for m in brute_force origin_distance x xy xyz min_axis sap grid; do
    if [ $m = brute_force ] && [ $2 -gt 100000 ]; then continue; fi
    r=$(timeout 120 $B bench --scene $1 --n $2 --methods $m --frames 3 --no-verify 2>/dev/null | grep -E "^$m " )
    echo "$1 $2 $m :: ${r:-TIMEOUT}" >> $out
  done
done
echo done >> $out
