#!/usr/bin/env bash
# The three paths of kedr adi's sweeps side by side (docs/adi.md, "The on-chip sweep", "The
# register sweep"):
# KEDR_ADI_SWEEP=thomas (a thread a line, c' and d' through global memory), chip (chunks of a
# line eliminated in shared memory, one thread a line for the interface system) and reg (each
# chunk in its thread's registers, the interface systems by cyclic reduction over the block).
# For each grid side and path it runs `kedr bench adi` (both precisions) and prints one table:
# the X, Y, Z (direct) and transposed Z sweeps and the transposes in ms, and a whole step with
# Z transposed and with Z direct, in ms and as the fraction of the copy bandwidth for the 12
# values a node a sweep the benchmark counts. Builds nothing.
#
#   bench/adi-chip.sh b/kedr                              (after a cuda build in b)
#   REG_LENS="0 16" bench/adi-chip.sh b/kedr              (other chunks for reg)
#   BASE=old/kedr bench/adi-chip.sh b/kedr                (also thomas and chip of another build)
#
# Arguments: the kedr program. Environment: SIZES (grid sides, default "256 384"), REPEATS (3),
# PATHS (default "thomas chip reg"), LENS (KEDR_ADI_CHIP_LEN values for chip, default "8"),
# REG_LENS (KEDR_ADI_REG_LEN values for reg: 0 = the default, 4; or 2, 4, 8, 16; default
# "0 2 8"), LINES (KEDR_ADI_CHIP_LINES, lines a block for chip and reg; default 0:
# chosen from the line length), BASE (another kedr program, e.g. a build of the commit before
# these paths, whose BASE_PATHS, default "thomas chip", are timed as "thomas@base", "chip@base"),
# BACKEND (cuda), OUT (a folder that keeps each run's full output; default a temporary one).
set -u -o pipefail

if [ $# -ne 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
    sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
    [ $# -eq 1 ] && exit 0 || exit 2
fi
kedr=$1
for k in "$kedr" ${BASE:-}; do
    if [ ! -x "$k" ]; then
        echo "adi-chip.sh: '$k' is not an executable kedr program (build it first)" >&2
        exit 2
    fi
done
sizes=${SIZES:-256 384}
repeats=${REPEATS:-3}
paths=${PATHS:-thomas chip reg}
lens=${LENS:-8}
reg_lens=${REG_LENS:-0 2 8}
lines=${LINES:-0}
backend=${BACKEND:-cuda}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out" || exit 2

# One run's table rows: "n path prec X Y Zd Zt transposes step_t pct_t step_d pct_d".
rows() { # n label log
    awk -v n="$1" -v label="$2" '
        /^X dir/ { x32 = $3; x64 = $6 }
        /^Y dir/ { y32 = $3; y64 = $6 }
        /^Z dir/ { zd32 = $3; z32 = $4; zd64 = $6; z64 = $7 }
        /^transpose/ { t32 = $2; t64 = $3 }
        /^whole step, f32, Z transposed/ { s32 = $6; p32 = $(NF - 2) }
        /^whole step, f64, Z transposed/ { s64 = $6; p64 = $(NF - 2) }
        /^whole step, f32, Z direct/ { d32 = $6; q32 = $(NF - 2) }
        /^whole step, f64, Z direct/ { d64 = $6; q64 = $(NF - 2) }
        END {
            if (s32 == "" || s64 == "") exit 1
            f = "%5s %-12s %4s %7s %7s %7s %7s %7s %9s %6s %9s %6s\n"
            printf f, n, label, "f32", x32, y32, zd32, z32, t32, s32, p32, d32, q32
            printf f, n, label, "f64", x64, y64, zd64, z64, t64, s64, p64, d64, q64
        }' "$3"
}

table="$out/table.txt"
: > "$table"
status=0
# run n label program path len reg_len
run() {
    local log="$out/n$1-${2//\//_}.log"
    echo "adi-chip.sh: n = $1, $2 ..." >&2
    if ! KEDR_ADI_SWEEP=$4 KEDR_ADI_CHIP_LEN=$5 KEDR_ADI_REG_LEN=$6 KEDR_ADI_CHIP_LINES=$lines \
        "$3" bench adi --n "$1" --repeats "$repeats" --backend "$backend" > "$log" 2>&1; then
        echo "adi-chip.sh: n = $1, $2: kedr bench adi failed (log: $log):" >&2
        tail -5 "$log" >&2
        status=1
        return
    fi
    head -1 "$log" >&2
    rows "$1" "$2" "$log" >> "$table" || {
        echo "adi-chip.sh: n = $1, $2: no timings in $log" >&2
        status=1
    }
}
for n in $sizes; do
    if [ -n "${BASE:-}" ]; then
        for path in ${BASE_PATHS:-thomas chip}; do
            run "$n" "$path@base" "$BASE" "$path" 8 0
        done
    fi
    for path in $paths; do
        case $path in
        chip)
            for len in $lens; do
                label=chip
                [ "$lens" != 8 ] && label="chip/$len"
                run "$n" "$label" "$kedr" chip "$len" 0
            done ;;
        reg)
            for rl in $reg_lens; do
                label=reg
                [ "$rl" != 0 ] && label="reg/$rl"
                run "$n" "$label" "$kedr" reg 8 "$rl"
            done ;;
        *) run "$n" "$path" "$kedr" "$path" 8 0 ;;
        esac
    done
done
echo
echo "per sweep and per step [ms] (Zd: the Z sweep direct; Zt: transposed, the sweep alone;"
echo "transp: the transposes there and back; a step: 4 global x 3 sweeps x 2 local iterations"
echo "with Z transposed (step Zt) or direct (step Zd); % of copy: the benchmark's 12 values a node"
echo "a sweep against the copy bandwidth)"
printf "%5s %-12s %4s %7s %7s %7s %7s %7s %9s %6s %9s %6s\n" n path prec X Y Zd Zt transp \
    "step Zt" "%copy" "step Zd" "%copy"
cat "$table"
echo "(full outputs in $out)"
exit $status
