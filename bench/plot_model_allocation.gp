# Allocation plot of tune-bench-model: for one model, the median (over seeds) of the reference
# total over the weighted total Σ weight · best after each trial of a model job, one line per
# task scheduler policy (0 until every layer has a best, below the plot).
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
select(p) = sprintf("< awk -F'\t' '$1 == \"%s\" && $2 == \"%s\" {print $3, $4}' %s", model, p, curves)
plot select("gradient") using 1:2 with lines linewidth 2 title "gradient (Ansor-style)", \
     select("round robin") using 1:2 with lines linewidth 2 title "round robin (uniform)", \
     0.95 with lines dashtype 2 linecolor "gray" title "95%", \
     0.90 with lines dashtype 3 linecolor "gray" title "90%"
