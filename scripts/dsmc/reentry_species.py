#!/usr/bin/env python3
"""Writes cases/dsmc/reentry-species.ini, the species file of the re-entry cases
(cases/dsmc/sphere-reentry*.ini): the five species of reacting air (N2, O2, NO, N, O) copied
unchanged from cases/dsmc/species.ini, and the freestream mixtures of the re-entry altitudes.

    scripts/dsmc/reentry_species.py [SPECIES_INI] [OUT_INI]

The composition comes from the U.S. Standard Atmosphere, 1976 (NOAA-S/T 76-1562, NASA
TM-X-74335), its table of number densities by species: at 100 km N2 9.210e18, O2 2.151e18,
O 4.298e17 and Ar 9.501e16 m^-3 (total 1.189e19 m^-3 with He and H, mass density
5.604e-7 kg/m^3, T = 195.08 K). Five-species air has no argon: the mixture keeps N2, O2 and O
in their table ratio (argon, 0.8% of the molecules, is left out, and the case gives the table's
mass density, so the freestream's rho and rho U^3 are the table's). NO and N, absent from the
freestream, get a trace of 1e-6 each, because a mixture's species need a fraction above 0.
Re-run after changing species.ini so the two files agree. Plain Python, no packages."""
import os
import sys

SPECIES = ["N2", "O2", "NO", "N", "O"]
# number densities, m^-3, U.S. Standard Atmosphere 1976 (N2, O2, O); NO and N a trace
MIXTURES = {
    "air5-100km": [("N2", 9.210e18), ("O2", 2.151e18), ("O", 4.298e17)],
}
TRACE = 1e-6


def sections(text):
    """The file's sections as (name, lines), each with the comment lines just above it."""
    out, name, body, pending = [], None, [], []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("[") and s.endswith("]"):
            if name is not None:
                out.append((name, body))
            name, body, pending = s[1:-1], pending + [line], []
        elif name is None:
            continue
        elif s.startswith("#") or not s:
            pending.append(line)
        else:
            body += pending + [line]
            pending = []
    if name is not None:
        out.append((name, body))
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "../../cases/dsmc/species.ini")
    dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here,
                                                             "../../cases/dsmc/reentry-species.ini")
    with open(src) as f:
        found = dict(sections(f.read()))
    missing = [s for s in SPECIES if s not in found]
    if missing:
        sys.exit("%s: no section for %s" % (src, ", ".join(missing)))
    lines = ["# Species of the re-entry cases (cases/dsmc/sphere-reentry*.ini), written by",
             "# scripts/dsmc/reentry_species.py: N2, O2, NO, N, O copied unchanged from species.ini",
             "# (Bird 1994, Appendix A, and the notes there), and the freestream mixtures of the",
             "# re-entry altitudes from the U.S. Standard Atmosphere, 1976 (see the script). Do not",
             "# edit by hand: change species.ini and run the script again.", ""]
    for s in SPECIES:
        body = list(found[s])
        while body and not body[-1].strip():
            body.pop()
        lines += body + [""]
    for name, parts in MIXTURES.items():
        total = sum(n for _, n in parts)
        x = dict((s, n / total) for s, n in parts)
        mix = ", ".join("%s %.6g" % (s, x.get(s, TRACE)) for s in SPECIES)
        lines += ["# %s: %s m^-3 (U.S. Standard Atmosphere 1976); NO, N: a trace"
                  % (name, ", ".join("%s %.4g" % p for p in parts)),
                  "[%s]" % name, "mixture = " + mix, ""]
    with open(dst, "w") as f:
        f.write("\n".join(lines))
    print("wrote", dst)


if __name__ == "__main__":
    main()
