#!/usr/bin/env python3
"""Re-measures hardware/catalog/accuracy.json: runs `podsim validate SET --format json` on every set the file lists
and rewrites its figures (MAPE, worst error and run, per-chip MAPE and worst), keeping ids, files and descriptions.
tests/test_validation_accuracy_file.cpp checks the same figures against a fresh validate (README, Accuracy).
It also rewrites README's per-run tables (the rows under a `| run | system | published s | ...` header whose first
row names a run of the set), so that the README shows what validate prints today; a set without such a table is
named on stderr. For the visible set it also rewrites the Accuracy section's headline (`**MAPE x%, worst y%** (id)`)
and its per-source table (SOURCES below: each row's runs by id prefix; a row it does not know is named on stderr).
Both files are written only after every set was measured.
Usage: scripts/update_accuracy.py [PODSIM_BINARY]   (default build/podsim; run from the repository root)"""
import json
import re
import subprocess
import sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
podsim = sys.argv[1] if len(sys.argv) > 1 else str(root / "build" / "podsim")
path = root / "hardware" / "catalog" / "accuracy.json"
acc = json.loads(path.read_text())
version = subprocess.run([podsim, "--version"], capture_output=True, text=True).stdout.strip().split(" (")[0]
measured = {}
for s in acc["sets"]:
    file = (root / s["file"]).resolve()
    out = subprocess.run([podsim, "validate", str(file), "--format", "json"], capture_output=True, text=True,
                         cwd=root, check=True).stdout
    v = measured[s["id"]] = json.loads(out)
    s["runs"] = v["predicted"]
    s["mape_pct"] = round(v["mape_pct"], 2)
    s["max_error_pct"] = round(v["max_error_pct"], 2)
    s["worst_id"] = v["worst_id"]
    by_chip = {}
    for run in v["runs"]:
        if run.get("error_pct") is not None:
            by_chip.setdefault(run["system"]["chip"], []).append(abs(run["error_pct"]))
    s["by_chip"] = {chip: {"runs": len(e), "mape_pct": round(sum(e) / len(e), 2), "max_error_pct": round(max(e), 2)}
                    for chip, e in sorted(by_chip.items())}
if version:
    acc["measured_with"] = version

HEADER = "| run | system | published s | predicted s | error % | completed |"
SOURCE_HEADER = "| source | runs | MAPE | worst |"
# The visible set's per-source rows (README, Accuracy): the id prefixes of each source's runs.
SOURCES = {
    "Megatron-LM SC21 (Narayanan et al. 2021)": ("narayanan21-",),
    "Korthikanti et al. 2022": ("korthikanti22-",),
    "PaLM 540B (T5X + Pathways)": ("palm-",),
    "MaxText v5p": ("maxtext-v5p-",),
    "MaxText v5e, 1-32 slices": ("maxtext-v5e-",),
    "MaxText v4": ("maxtext-v4-",),
    "NeMo 24.07 H100": ("nemo2407-",),
    "MT-NLG 530B / BLOOM 176B (Megatron-DeepSpeed)": ("mtnlg-", "bloom-"),
    "MLPerf v3.0/v3.1 GPT-3 H100": ("mlperf-",),
}


def table_rows(v):
    rows = []
    for run in v["runs"]:
        if run.get("error_pct") is None:
            continue
        rows.append(f'| {run["id"]} | {run["system"]["label"]} | {run["published_step_time_s"]:.3f} | '
                    f'{run["predicted_step_time_s"]:.3f} | {run["error_pct"]:+.1f} | {", ".join(run["chosen"])} |')
    return rows


readme = root / "README.md"
lines = readme.read_text().split("\n")
for s in acc["sets"]:
    v = measured[s["id"]]
    ids = {run["id"] for run in v["runs"]}
    found = False
    for i, line in enumerate(lines):
        if line != HEADER or i + 2 >= len(lines) or lines[i + 2].split(" | ")[0].lstrip("| ") not in ids:
            continue
        end = i + 2
        while end < len(lines) and lines[end].startswith("| "):
            end += 1
        lines[i + 2:end] = table_rows(v)
        found = True
    if not found:
        print(f'{s["id"]}: no per-run table in README.md (header "{HEADER}")', file=sys.stderr)


def rewrite_visible_summary(lines, v):
    """The headline and per-source table of README's Accuracy section, from the visible set's validate."""
    start = lines.index("## Accuracy")
    headline = re.compile(r"\*\*MAPE [0-9.]+%, worst [0-9.]+%\*\* \([^)]*\)")
    at = next((i for i in range(start, len(lines)) if headline.search(lines[i])), None)
    if at is None:
        print("visible: no headline '**MAPE x%, worst y%** (id)' under '## Accuracy' in README.md", file=sys.stderr)
    else:
        lines[at] = headline.sub(f'**MAPE {v["mape_pct"]:.2f}%, worst {v["max_error_pct"]:.2f}%** ({v["worst_id"]})',
                                 lines[at], 1)
    if SOURCE_HEADER not in lines[start:]:
        print(f"visible: no per-source table under '## Accuracy' in README.md (header \"{SOURCE_HEADER}\")",
              file=sys.stderr)
        return
    errors = [(r["id"], abs(r["error_pct"])) for r in v["runs"] if r.get("error_pct") is not None]
    for j in range(lines.index(SOURCE_HEADER, start) + 2, len(lines)):
        if not lines[j].startswith("| "):
            break
        label = lines[j].split(" | ")[0][2:]
        prefixes = SOURCES.get(label)
        e = [x for rid, x in errors if prefixes and rid.startswith(prefixes)]
        if not e:
            print(f"visible: README source row '{label}' matches no run (SOURCES)", file=sys.stderr)
            continue
        lines[j] = f"| {label} | {len(e)} | {sum(e) / len(e):.2f}% | {max(e):.2f}% |"


rewrite_visible_summary(lines, measured["visible"])
path.write_text(json.dumps(acc, indent=1, ensure_ascii=False) + "\n")
readme.write_text("\n".join(lines))
for s in acc["sets"]:
    print(f'{s["id"]}: {s["runs"]} runs, MAPE {s["mape_pct"]}%, worst {s["max_error_pct"]}% ({s["worst_id"]})')
