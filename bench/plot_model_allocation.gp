# Allocation plot of tune-bench-model: for one model, the median (over seeds) of the reference
# total over the weighted total Σ weight · best after each trial of a model job, one line per
# task scheduler policy in the file (0 until every layer has a best, below the plot).
# Usage: gnuplot -c bench/plot_model_allocation.gp CURVES.tsv MODEL OUT.svg [YMIN (0.85)]
curves = ARG1
model = ARG2
out = ARG3
ymin = ARGC >= 4 ? real(ARG4) : 0.85
set terminal svg size 720,440 dynamic font "sans,12"
set output out
set title sprintf("%s: weighted total time of a model job, gradient vs uniform allocation", model) noenhanced
set xlabel "trials of the model job"
set ylabel "reference total / total so far (median of seeds)"
set yrange [ymin:1.0]
set key bottom right
set grid
# Policy names hold spaces; gnuplot's word lists split on them, so they travel with '_' for ' '.
policies = system(sprintf("awk -F'\t' 'NR > 1 && $1 == \"%s\" {p = $2; gsub(/ /, \"_\", p); if (!seen[p]++) print p}' %s", model, curves))
select(p) = sprintf("< awk -F'\t' '{p = $2; gsub(/ /, \"_\", p)} $1 == \"%s\" && p == \"%s\" {print $3, $4}' %s", model, p, curves)
label(p) = system(sprintf("echo '%s' | tr _ ' '", p))
plot for [p in policies] select(p) using 1:2 with lines linewidth 2 title label(p) noenhanced, \
     0.95 with lines dashtype 2 linecolor "gray" title "95%", \
     0.90 with lines dashtype 3 linecolor "gray" title "90%"
