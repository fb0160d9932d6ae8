#!/usr/bin/env bash
# The C program shown in README.md's "Using the library" is examples/readme/hello.c, verbatim
# (test_install.sh compiles and runs that file). Usage: test_readme.sh SOURCE_DIR
set -euo pipefail
src=$1

shown=$(awk '/^## Using the library/ { in_section = 1; next }
             /^## / { in_section = 0 }
             in_section && /^```c$/ { in_code = 1; next }
             in_code && /^```$/ { exit }
             in_code { print }' "$src/README.md")
if [ -z "$shown" ]; then
  echo "README.md: no \`\`\`c block under \"## Using the library\"" >&2
  exit 1
fi
if ! diff -u "$src/examples/readme/hello.c" <(printf '%s\n' "$shown"); then
  echo "README.md's example differs from examples/readme/hello.c (diff above): make them one" >&2
  exit 1
fi
echo "README.md's example is examples/readme/hello.c"
