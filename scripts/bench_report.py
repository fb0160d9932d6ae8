#!/usr/bin/env python3
"""Turns `kedr bench prim --json` files into the Markdown tables of docs/performance.md.

usage: bench_report.py RESULT.json [RESULT.json ...]
"""
import json
import sys


def table(path):
    with open(path) as f:
        d = json.load(f)
    cuda = d.get("backend") == "cuda"
    print(f"**{d.get('device', '?')}**, back end {d.get('backend')}, {d.get('date', '?')}, "
          f"commit {d.get('commit', '?')}; measured copy bandwidth {d.get('copy_gbps', 0):.0f} GB/s\n")
    head = "| primitive | n | time (ms) | Gelem/s | GB/s | of copy bw |"
    rule = "| --- | ---: | ---: | ---: | ---: | ---: |"
    if cuda:
        head += " CUB (ms) | kedr / CUB |"
        rule += " ---: | ---: |"
    print(head)
    print(rule)
    for r in d["results"]:
        row = (f"| {r['name']} | {r['n']} | {r['ms']:.3f} | {r['gelems']:.1f} | {r['gbps']:.0f} | "
               f"{100 * r['frac_copy']:.0f}% |")
        if cuda:
            cub = r.get("cub_ms")
            ratio = r.get("ratio_vs_cub")
            row += (f" {cub:.3f} |" if cub else " - |") + (f" {ratio:.2f} |" if ratio else " - |")
        print(row)
    print()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        table(p)
