#!/bin/bash
B=/work/main/target/release/sweepfan
out=/tmp/auto/gpu_survey.txt
: > $out
run() { r=$(timeout $4 $B bench --backend gpu --scene $1 --n $2 --methods $3 --frames 3 --no-verify 2>/dev/null | grep -E "^$3 " ); echo "$1 $2 $3 :: ${r:-TIMEOUT}" >> $out; }
SC=("paper 5000" "paper 100000" "density 1000000" "clusters 1000000" "line-x 100000" "one-point 2000" "mixed-radii 200000" "giant 100000" "wide 1000000")
for spec in "${SC[@]}"; do set -- $spec; for m in grid sap; do run $1 $2 $m 150; done; done
for spec in "${SC[@]}"; do set -- $spec; for m in brute_force x xy xyz min_axis origin_distance; do run $1 $2 $m 45; done; done
echo done >> $out
#!/bin/bash
B=/work/main/target/release/sweepfan
out=/tmp/auto/gpu_survey.txt
run() { r=$(timeout $4 $B bench --backend gpu --scene $1 --n $2 --methods $3 --frames 3 --no-verify 2>/dev/null | grep -E "^$3 " ); echo "$1 $2 $3 :: ${r:-TIMEOUT}" >> $out; }
for m in brute_force x xy xyz min_axis origin_distance; do run one-point 2000 $m 60; done
for m in x xy xyz origin_distance min_axis; do run line-x 100000 $m 60; done
for m in x xy xyz; do run wide 1000000 $m 90; done
echo done2 >> $out
