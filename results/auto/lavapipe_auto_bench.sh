#!/bin/bash
# auto-bench on lavapipe in pieces: each scene's method list leaves out the methods whose single
# frame ran past 45-150 s in `bench --backend gpu` (results/auto/lavapipe_survey.txt).
cd /work/main
B=target/release/sweepfan
O=results/auto
$B auto-bench --backend gpu --scenes paper:5000,one-point:2000 --methods all --budget-s 5 --json $O/lavapipe_a.json > $O/lavapipe_a.txt 2>&1
$B auto-bench --backend gpu --scenes line-x:100000 --methods grid,sap,x,origin_distance,min_axis --budget-s 5 --json $O/lavapipe_b.json > $O/lavapipe_b.txt 2>&1
$B auto-bench --backend gpu --scenes wide:1000000 --methods grid,sap,x,xy,xyz --budget-s 8 --json $O/lavapipe_c.json > $O/lavapipe_c.txt 2>&1
$B auto-bench --backend gpu --scenes paper:100000,mixed-radii:200000,giant:100000 --methods grid,sap,x,xy --budget-s 5 --json $O/lavapipe_d.json > $O/lavapipe_d.txt 2>&1
$B auto-bench --backend gpu --scenes density:1000000,clusters:1000000 --methods grid --budget-s 5 --json $O/lavapipe_e.json > $O/lavapipe_e.txt 2>&1
