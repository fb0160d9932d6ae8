#!/usr/bin/env bash
# The bases of layer 7 of B0(2,5) that reproduce published diameters of B_K, K = 15, 16, 17
# (docs/cayley.md, "Another basis of layer 7"). Every quotient B_K(L) = burnside:K:ROWS is
# searched, one spec per line of output:
#
#   scripts/cayley/layer7-search.sh K [DIAM DIAM_INV]     (kedr in build/, or KEDR=path)
#
# K = 15: the 156 rows L (a hyperplane each), K = 16: the 806 planes, K = 17: the 156 lines of
# layer 7, each as its reduced row echelon form. With the published diameters DIAM ({a1, a2})
# and DIAM_INV ({a1^+-1, a2^+-1}) the search with inverses runs first and the other only where
# it matches. FIRST and COUNT (environment) take a slice of the list, to split the work over
# several runs; KEDR_ARGS adds options (e.g. "--backend cuda" or "--devices all"). SPECS=FILE
# searches the `burnside:K:ROWS` lines of FILE instead of all, e.g. one quotient an orbit of the
# generators' symmetries, whose quotients share their diameters:
#   python3 scripts/cayley/layer7-symmetry.py --reps 17:signed > reps.txt   (48 of the 156)
#   SPECS=reps.txt scripts/cayley/layer7-search.sh 17 55 34
set -u -o pipefail
k=${1:?usage: layer7-search.sh K [DIAM DIAM_INV]}
want=${2:-} want_inv=${3:-}
kedr=${KEDR:-build/kedr}
case $k in 15 | 16 | 17) ;; *) echo "layer7-search.sh: K must be 15, 16 or 17" >&2; exit 2 ;; esac
[ -x "$kedr" ] || { echo "layer7-search.sh: $kedr not found (build kedr or set KEDR)" >&2; exit 2; }
specs=$(python3 - "$k" <<'PY'
import itertools, sys
k = int(sys.argv[1]); rows = k - 14
# reduced row echelon forms of rank `rows` over Z_5 with 4 columns
out = []
for pivots in itertools.combinations(range(4), rows):
    free = [(r, c) for r in range(rows) for c in range(4)
            if c > pivots[r] and c not in pivots]
    for vals in itertools.product(range(5), repeat=len(free)):
        m = [[1 if c == pivots[r] else 0 for c in range(4)] for r in range(rows)]
        for (r, c), v in zip(free, vals):
            m[r][c] = v
        out.append("/".join("".join(map(str, row)) for row in m))
for s in out:
    print(f"burnside:{k}:{s}")
PY
)
if [ -n "${SPECS:-}" ]; then
    [ -r "$SPECS" ] || { echo "layer7-search.sh: SPECS=$SPECS: cannot read it" >&2; exit 2; }
    specs=$(grep -E "^burnside:$k:" "$SPECS")
    [ -n "$specs" ] || { echo "layer7-search.sh: $SPECS has no burnside:$k:ROWS line" >&2; exit 2; }
fi
first=${FIRST:-1} count=${COUNT:-100000}
total=$(echo "$specs" | wc -l)
echo "# B_$k: $total bases of layer 7; searching $first.. (at most $count)${want:+; published $want and $want_inv}"
diameter() { # spec, extra option
    "$kedr" cayley "$1" $2 ${KEDR_ARGS:-} -q 2>&1 | awk '/^diameter/ {print $2}'
}
echo "$specs" | tail -n +"$first" | head -n "$count" | while read -r spec; do
    if [ -n "$want" ]; then
        di=$(diameter "$spec" --inverses)
        if [ "$di" = "$want_inv" ]; then
            d=$(diameter "$spec" "")
            verdict=$([ "$d" = "$want" ] && echo MATCH || echo "-")
        else
            d="(not run)" verdict="-"
        fi
        echo "$spec  {a1,a2}: $d  {a1^+-1,a2^+-1}: ${di:-error}  $verdict"
    else
        echo "$spec  {a1,a2}: $(diameter "$spec" "")  {a1^+-1,a2^+-1}: $(diameter "$spec" --inverses)"
    fi
done
