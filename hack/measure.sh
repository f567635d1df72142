# Shared by the command-level benchmarks (hack/bench-*.sh): source it after
# setting runs and work.
#
# measure LABEL CMD...: runs CMD $runs times and prints the median wall
# time, CPU time and peak RSS.
measure() {
	local label=$1; shift
	local out=$work/times
	: >"$out"
	for _ in $(seq "$runs"); do
		/usr/bin/time -f "%e %U %S %M" -a -o "$out" "$@" >/dev/null 2>"$work/stderr" || {
			echo "$label failed:" >&2; head -5 "$work/stderr" >&2; exit 1; }
	done
	awk -v label="$label" '
		{ wall[NR]=$1; cpu[NR]=$2+$3; rss[NR]=$4 }
		function median(a, n,   i, j, t) {
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		END { printf "%-28s wall %7.2f s   cpu %7.2f s   peak RSS %7.0f MB   (median of %d)\n", label, median(wall, NR), median(cpu, NR), median(rss, NR) / 1024, NR }
	' "$out"
}
