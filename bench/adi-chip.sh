#!/usr/bin/env bash
# The two paths of kedr adi's sweeps side by side (docs/adi.md, "The on-chip sweep"):
# KEDR_ADI_SWEEP=thomas (a thread a line, c' and d' through global memory) and chip (a block of
# neighbouring lines, each line's elimination in chunks kept in shared memory, each value read
# once and written once). For each grid side and path it runs `kedr bench adi` (both
# precisions) and prints one table: the X, Y and transposed Z sweeps and the transposes in ms,
# a whole step (Z transposed) in ms and its fraction of the copy bandwidth for the 12 values a
# node a sweep the benchmark counts. Builds nothing.
#
#   bench/adi-chip.sh b/kedr                              (after a cuda build in b)
#   SIZES=256 LENS="4 8 16" bench/adi-chip.sh b/kedr      (also other chunk lengths)
#
# Arguments: the kedr program. Environment: SIZES (grid sides, default "256 384"), REPEATS (3),
# PATHS (default "thomas chip"), LENS (KEDR_ADI_CHIP_LEN values for the chip path, default
# "8"), LINES (KEDR_ADI_CHIP_LINES, lines a block; default 0: chosen from the line length),
# BACKEND (cuda), OUT (a folder that keeps each run's full output; default a temporary one).
set -u -o pipefail

if [ $# -ne 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
    [ $# -eq 1 ] && exit 0 || exit 2
fi
kedr=$1
if [ ! -x "$kedr" ]; then
    echo "adi-chip.sh: '$kedr' is not an executable kedr program (build it first)" >&2
    exit 2
fi
sizes=${SIZES:-256 384}
repeats=${REPEATS:-3}
paths=${PATHS:-thomas chip}
lens=${LENS:-8}
lines=${LINES:-0}
backend=${BACKEND:-cuda}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out" || exit 2

# One run's table rows: "n path prec X Y Zt transposes step pct".
rows() { # n label log
    awk -v n="$1" -v label="$2" '
        /^X dir/ { x32 = $3; x64 = $6 }
        /^Y dir/ { y32 = $3; y64 = $6 }
        /^Z dir/ { z32 = $4; z64 = $7 }
        /^transpose/ { t32 = $2; t64 = $3 }
        /^whole step, f32, Z transposed/ { s32 = $6; p32 = $(NF - 2) }
        /^whole step, f64, Z transposed/ { s64 = $6; p64 = $(NF - 2) }
        END {
            if (s32 == "" || s64 == "") exit 1
            printf "%5s %-10s %4s %8s %8s %8s %8s %10s %6s\n", n, label, "f32", x32, y32, z32, t32, s32, p32
            printf "%5s %-10s %4s %8s %8s %8s %8s %10s %6s\n", n, label, "f64", x64, y64, z64, t64, s64, p64
        }' "$3"
}

table="$out/table.txt"
: > "$table"
status=0
for n in $sizes; do
    for path in $paths; do
        for len in $( [ "$path" = chip ] && echo "$lens" || echo 8 ); do
            label=$path
            [ "$path" = chip ] && [ "$lens" != 8 ] && label="chip/$len"
            log="$out/n$n-$path-$len.log"
            echo "adi-chip.sh: n = $n, KEDR_ADI_SWEEP=$path KEDR_ADI_CHIP_LEN=$len ..." >&2
            if ! KEDR_ADI_SWEEP=$path KEDR_ADI_CHIP_LEN=$len KEDR_ADI_CHIP_LINES=$lines \
                "$kedr" bench adi --n "$n" --repeats "$repeats" --backend "$backend" \
                > "$log" 2>&1; then
                echo "adi-chip.sh: n = $n, $path: kedr bench adi failed (log: $log):" >&2
                tail -5 "$log" >&2
                status=1
                continue
            fi
            head -1 "$log" >&2
            rows "$n" "$label" "$log" >> "$table" || {
                echo "adi-chip.sh: n = $n, $path: no timings in $log" >&2
                status=1
            }
        done
    done
done
echo
echo "per sweep and per step [ms] (Z: the transposed sweep alone; a step: Z transposed, with the"
echo "transposes; % of copy: the benchmark's 12 values a node a sweep against the copy bandwidth)"
printf "%5s %-10s %4s %8s %8s %8s %8s %10s %6s\n" n path prec X Y Z transp step "%copy"
cat "$table"
echo "(full outputs in $out)"
exit $status
