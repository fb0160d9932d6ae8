#!/usr/bin/env bash
# bench/trace-summary.py on timelines of known shape (the files bench/trace/gpu_trace.c writes):
# a rank of 5 flow-like steps of 10 ms (three velocity copies, a cell-sized copy at the end of
# each step, a smoothing kernel, a signal kernel, a read-back and a gap of 300 us after it), and
# a file with no step marks. The summary must give the wall time, busy and idle time, the
# kernels' totals and the gap after the read-back; --whole must take any program's window.
# usage: test_trace_summary.sh KEDR_BINARY SOURCE_DIR
src=$2
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "test_trace_summary: python3 not found (scripts/install-deps.sh installs it)"; exit 1; }
summary=$src/bench/trace-summary.py

# times in ns; step s starts at 1e6 + s 1e7
mkdir -p "$tmp/tr"
awk 'BEGIN {
  for (s = 0; s < 6; s++) {
    t = 1000000 + s * 10000000
    for (c = 0; c < 3; c++) { printf "C,%d,%d,7,8:4096\n", t, t + 100000; t += 100000 }
    printf "K,%d,%d,7,_Z4k_gsv\n", t, t + 6000000; t += 6000000
    printf "K,%d,%d,7,_Z18comm_signal_kernelv\n", t, t + 1000000; t += 1000000
    printf "C,%d,%d,7,2:8\n", t, t + 10000; t += 10000
    printf "A,%d,%d,1,cudaStreamSynchronize_v3020\n", t - 10000, t + 290000
    t += 300000
    printf "K,%d,%d,7,_Z7k_shiftv\n", t, t + 1390000; t += 1390000
    printf "C,%d,%d,7,8:2048\n", t, t + 1000000; t += 1000000
  }
}' >"$tmp/tr/trace-r0-1.csv"
python3 "$summary" --last 4 "$tmp/tr" >"$tmp/sum.txt" 2>&1
# wall 10 ms; busy 9.7 (3 x 0.1 + 6 + 1 + 0.01 + 1.39 + 1.0, the cell copy last), idle 0.3 after
# the read-back; 6 steps marked (the last one open)
check "steps" 0 "6 steps found" -- cat "$tmp/sum.txt"
check "wall" 0 "wall 10.00 +gpu busy 9.70 +idle 0.30" -- cat "$tmp/sum.txt"
check "smoothing" 0 "6.000 +1 +6000.0 +k_gs$" -- cat "$tmp/sum.txt"
check "signal" 0 "1.000 +1 +1000.0 +comm_signal_kernel$" -- cat "$tmp/sum.txt"
check "gap after the read-back" 0 "0.300 +1 +copy 2:8$" -- cat "$tmp/sum.txt"
check "runtime call" 0 "0.300 +1 +cudaStreamSynchronize_v3020$" -- cat "$tmp/sum.txt"

# any program: --whole takes the window from a third of the way through its kernels
awk 'BEGIN { for (i = 0; i < 9; i++) printf "K,%d,%d,3,_Z3fooi\n", i * 1000000, i * 1000000 + 500000 }' \
  >"$tmp/tr/trace-r1-2.csv"
check "no marks" 0 "0 step marks: too few" -- python3 "$summary" "$tmp/tr/trace-r1-2.csv"
check "whole" 0 "wall 5.50 +gpu busy 3.00 +idle 2.50" -- python3 "$summary" --whole "$tmp/tr/trace-r1-2.csv"
check "missing" 1 "none: no such file or folder" -- python3 "$summary" "$tmp/none"
mkdir "$tmp/empty"
check "empty" 1 "no trace files" -- python3 "$summary" "$tmp/empty"
finish test_trace_summary
