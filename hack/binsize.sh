#!/usr/bin/env bash
# Reports what a Go binary is made of: the size of its symbols summed by
# module and by package, largest first, from `go tool nm -size` and the
# module list of `go version -m`. The binary must keep its symbol table
# (built without -ldflags=-s). Sizes are of code and data symbols; the
# tables the linker writes for them (pclntab, symbol names) and zeroed
# memory (bss) are left out, which readelf finds, so the sums are smaller than the file.
#
# usage: hack/binsize.sh BINARY [TOP]   (default 25 rows a table)
set -euo pipefail
bin=$1
top=${2:-25}

# Zeroed memory takes no room in the file: leave out the symbols from the
# first bss section on.
bss=$(readelf -SW "$bin" | awk '$2 ~ /^\.(noptr)?bss$/ { print $4; exit }')
{
	# The module paths, longest first, so that a package takes the
	# module whose path is its longest prefix.
	go version -m "$bin" | awk '$1 == "mod" || $1 == "dep" { print "MOD", $2 }'
	go tool nm -size "$bin" | awk -v bss="$bss" '
		function dec(h,   i, n) { n = 0; h = tolower(h); for (i = 1; i <= length(h); i++) n = n * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1; return n }
		BEGIN { limit = dec(bss) }
		$3 ~ /^[TtRrDd]$/ && dec($1) < limit { print "SYM", $2, $4 }'
} | awk -v top="$top" '
function pkgof(sym,   i, rest, dot) {
	# A symbol is PACKAGE.NAME; a package path holds slashes, a name
	# may hold dots: the package ends at the first dot after the last
	# slash before any "(" or "[".
	sub(/[\[(].*$/, "", sym)
	i = 0
	rest = sym
	while ((dot = index(rest, "/")) > 0) { i += dot; rest = substr(rest, dot + 1) }
	dot = index(rest, ".")
	if (dot == 0) return sym
	return substr(sym, 1, i + dot - 1)
}
$1 == "MOD" { mods[++nmods] = $2; next }
$1 == "SYM" {
	size = $2; sym = $3
	# A dot in the last element of a path is escaped in symbols. The
	# symbols of the linker start with "go." too, but never with a host
	# name and a slash as a module such as go.opentelemetry.io/otel does.
	if (sym ~ /^go:|^type:|^\$|^_/ || sym ~ /^go\./ && sym !~ /^go\.[a-z0-9-]+\.[a-z]+\//) { p = "(types-and-linker-data)" } else { p = pkgof(sym); gsub(/%2e/, ".", p) }
	bypkg[p] += size
	total += size
}
END {
	for (p in bypkg) {
		m = ""
		for (i = 1; i <= nmods; i++) {
			if ((p == mods[i] || index(p, mods[i] "/") == 1) && length(mods[i]) > length(m)) m = mods[i]
		}
		if (m == "") m = (p ~ /^\(/ ? p : (index(p, ".") && index(p, ".") < index(p "/", "/") ? p : "std"))
		bymod[m] += bypkg[p]
		npkgs[m]++
	}
	printf "%-60s %10s %6s %5s\n", "MODULE", "BYTES", "SHARE", "PKGS"
	n = 0
	cmd = "sort -k2 -nr"
	for (m in bymod) printf "%-60s %10d %5.1f%% %5d\n", m, bymod[m], 100 * bymod[m] / total, npkgs[m] | cmd
	close(cmd)
	printf "%-60s %10d\n\n", "total", total
	printf "%-60s %10s %6s\n", "PACKAGE", "BYTES", "SHARE"
	for (p in bypkg) printf "%-60s %10d %5.1f%%\n", p, bypkg[p], 100 * bypkg[p] / total | cmd
	close(cmd)
}' | awk -v top="$top" '/^MODULE/ || /^PACKAGE/ { n = 0 } { if (n++ <= top || /^total/ || /^$/) print }'
