#!/usr/bin/env bash
# fuzz/seed_corpus.sh OUT_DIR: assembles each fuzz target's seed corpus under OUT_DIR/<target>/ from the shipped
# inputs (scenarios/, scenarios/validation/, ../shared/validation/published_runs.json one run per file, sweeps,
# claims), plus sweep and claim variants pointing at every shipped scenario. Nothing is kept in the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: fuzz/seed_corpus.sh OUT_DIR}
mkdir -p "$out"/{scenario,published_run,sweep,claim}
cp scenarios/*.json "$out/scenario/"
cp scenarios/sweeps/*.json "$out/sweep/"
cp scenarios/claims/*.json "$out/claim/"
for s in scenarios/*.json; do
  name=$(basename "$s")
  for f in scenarios/sweeps/*.json; do
    sed -E "s|(\"scenario\": *\")[^\"]*\"|\1../$name\"|" "$f" >"$out/sweep/$(basename "$f" .json)--$name"
  done
  for f in scenarios/claims/*.json; do
    sed -E "s|(\"scenario\": *\")[^\"]*\"|\1../$name\"|" "$f" >"$out/claim/$(basename "$f" .json)--$name"
  done
done
runs=(scenarios/validation/*.json)
[[ -f ../shared/validation/published_runs.json ]] && runs+=(../shared/validation/published_runs.json)
for f in "${runs[@]}"; do
  base=$(basename "$f" .json)
  if command -v python3 >/dev/null; then  # one run per file: small seeds, each a different shape
    python3 - "$f" "$out/published_run/$base" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))
for i, r in enumerate(runs):
    with open(f"{sys.argv[2]}-{i:03d}.json", "w") as o:
        json.dump([r], o, indent=1)
PY
  else
    cp "$f" "$out/published_run/$base.json"  # the whole array (the entry simulates its first run)
  fi
done
