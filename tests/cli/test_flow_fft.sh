#!/usr/bin/env bash
# kedr flow with `[pressure] solver = fft` (the direct FFT/DCT Poisson solver): the 2D
# Taylor–Green case (periodic both ways: real DFTs) and the lid-driven cavity (walls: DCTs),
# 20 steps each, on the cpu (with FFTW) and, where there is a GPU, on cuda (cuFFT). Each run's
# pressure solve is direct (0 iterations, a residual near round-off); with both back ends their
# fields (u, v, p of every cell, written to 10 digits) must agree to 1e-8 of the largest value.
# A build without FFTW must refuse the cpu solve, naming what to install.
# usage: test_flow_fft.sh KEDR_BINARY SOURCE_DIR
kedr=$1
src=$2
. "$(dirname "$0")/lib.sh"

gpus=$("$kedr" info | sed -n 's/^GPUs: //p')
backends=$("$kedr" info | sed -n 's/^back ends built in: //p')

# the largest |a - b| of columns 3.. (u, v, p) of two field CSVs, over their largest |a|
differ() {
  paste -d, "$1" "$2" | awk -F, 'NR > 1 { h = NF / 2
      for (c = 3; c <= 5; c++) { d = $c - $(c + h); d = d < 0 ? -d : d; a = $c < 0 ? -$c : $c
        if (d > dmax) dmax = d; if (a > amax) amax = a } }
    END { printf "%.3g\n", (amax > 0 ? dmax / amax : dmax) }'
}

for name in taylor_green cavity_re100; do
  ini=$src/cases/flow/$name.ini
  if grep -q '^\[pressure\]' "$ini"; then
    sed -e '/^solver = /d' -e '/^preconditioner = /d' \
      -e 's/^\[pressure\]/[pressure]\nsolver = fft/' -e 's/^stats_every = .*/stats_every = 10/' \
      "$ini" >"$tmp/$name.ini"
  else
    printf '\n[pressure]\nsolver = fft\n' | cat "$ini" - >"$tmp/$name.ini"
  fi
  cpu_ok=0
  "$kedr" flow "$tmp/$name.ini" --backend cpu --steps 20 --out "$tmp/cpu-$name" >"$tmp/out" 2>&1
  rc=$?
  if grep -q 'needs FFTW' "$tmp/out"; then
    [ $rc -eq 1 ] && pass || fail "$name: cpu without FFTW: exit $rc"
  elif [ $rc -eq 0 ] && grep -qE 'step 20 .*pressure 0 it \(res [0-9.]+e-1[0-9]\)' "$tmp/out"; then
    pass
    cpu_ok=1
  else
    fail "$name: cpu fft run: exit $rc"
    head -20 "$tmp/out" >&2
  fi
  if [ "${gpus:-0}" -gt 0 ] && [[ $backends == *cuda* ]]; then
    check "$name-cuda" 0 'step 20 .*pressure 0 it \(res [0-9.]+e-1[0-9]\)' -- \
      "$kedr" flow "$tmp/$name.ini" --backend cuda --steps 20 --out "$tmp/cuda-$name"
    if [ $cpu_ok -eq 1 ]; then
      d=$(differ "$tmp/cpu-$name/$name.csv" "$tmp/cuda-$name/$name.csv")
      echo "$name: cuda fields differ from the cpu's by $d of the largest"
      awk -v d="$d" 'BEGIN { exit !(d <= 1e-8) }' && pass || fail "$name: cuda differs by $d"
    fi
  fi
done
finish test_flow_fft
