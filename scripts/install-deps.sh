#!/usr/bin/env bash
# Installs the Debian packages kedr needs to build and test; does nothing when they are present.
# Not root: prints the command to run instead. The CUDA toolkit is optional (the cuda back end is
# built when nvcc is found) and is not installed from here.
set -euo pipefail

packages=(gcc g++ make cmake pkg-config)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

cmd="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "kedr needs these packages: ${missing[*]}" >&2
  echo "run as root: $cmd" >&2
  exit 1
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
