#!/usr/bin/env bash
# Installs what podsim needs from Debian's packages (only what is missing), then configures and builds it.
# chromium is for the test that opens the HTML report in a headless browser (issue #5); python3-pandas for the test
# that loads the sweep CSV the way its users do and python3-jsonschema for the one that validates every JSON output
# against docs/output.schema.json (issue #14); python3-yaml for the one that checks deploy/'s Kubernetes manifest as
# Kubernetes reads it (issue #16).
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(cmake g++ make pkg-config libsimgrid-dev libboost-graph-dev libfmt-dev nlohmann-json3-dev doctest-dev
          libopenblas-dev chromium python3-pandas python3-jsonschema python3-yaml)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
