"""kedr's case files (INI) as the comparison scripts read them: plain Python 3, no packages."""
import os
import sys


class CaseFileError(Exception):
    """A case file that is missing or malformed; the message names the file and line."""


def read_ini(path):
    """The sections of an INI file as {section: {key: (value, line)}}; comments start with # or ;."""
    if not os.path.isfile(path):
        raise CaseFileError(f"{path}: no such file")
    out, sec = {}, None
    with open(path) as fp:
        for no, raw in enumerate(fp, 1):
            line = raw.split("#", 1)[0].split(";", 1)[0].strip()
            if not line:
                continue
            if line.startswith("["):
                if not line.endswith("]"):
                    raise CaseFileError(f"{path}:{no}: malformed section header '{line}'")
                sec = line[1:-1].strip()
                out.setdefault(sec, {})
                continue
            if "=" not in line or sec is None:
                raise CaseFileError(f"{path}:{no}: expected 'key = value' inside a section, "
                                    f"got '{line}'")
            k, v = line.split("=", 1)
            out[sec][k.strip()] = (v.strip(), no)
    return out


def die(prog, msg):
    """The comparison scripts' way out for a missing or malformed file: exit status 2."""
    print(f"{prog}: error: {msg}", file=sys.stderr)
    sys.exit(2)


def read_ini_or_exit(path, prog):
    """read_ini, or die(prog, ...) naming the file and line."""
    try:
        return read_ini(path)
    except CaseFileError as e:
        die(prog, str(e))
