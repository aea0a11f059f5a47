# Convergence plot of tune-bench-search: for one workload, the median (over seeds) of the
# reference time over the best time found so far, against trials, one line per strategy.
# Usage: gnuplot -c bench/plot_convergence.gp CURVES.tsv WORKLOAD OUT.svg ["STRATEGY ..."]
curves = ARG1
workload = ARG2
out = ARG3
set terminal svg size 720,440 dynamic font "sans,12"
set output out
set title workload noenhanced
set xlabel "trials"
set ylabel "reference time / best time so far (median of seeds)"
set yrange [0:1.05]
set key bottom right
set grid
strategies = ARGC >= 4 ? ARG4 : "random grid ga xgb xgb+transfer job job+transfer"
select(s) = sprintf("< awk -F'\t' '$1 == \"%s\" && $2 == \"%s\" {print $3, $4}' %s", workload, s, curves)
plot for [s in strategies] select(s) using 1:2 with lines linewidth 2 title s, \
     1 with lines dashtype 2 linecolor "gray" title "reference (best measured)"
