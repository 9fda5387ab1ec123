# Figures over the numbers on stdin, one a line, for the bench scripts
# (sourced, not run).

median() { sort -g | awk '{v[NR] = $1} END { if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# min-max, three decimals
spread() { sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.3f-%.3f", lo, hi}'; }

# interquartile range, "Q1-Q3", interpolated between ranks
iqr() { sort -g | awk '{v[NR] = $1}
	function q(p,  r, i) { r = 1 + (NR - 1) * p; i = int(r); return v[i] + (r - i) * (v[i + 1] - v[i]) }
	END { if (NR == 0) print "n/a"; else printf "%g-%g", q(0.25), q(0.75) }'; }
