#!/usr/bin/env bash
# A podsim sweep spread over a Slurm cluster as a job array, then merged by a job that waits for it.
#   deploy/slurm-sweep.sh SWEEP.json OUTDIR [SHARDS]     (submits; SHARDS defaults to 4)
# submits `--array=0-(SHARDS-1)` of this script (task K runs podsim sweep --shard K/SHARDS into OUTDIR/shard-K.json)
# and a merge job with --dependency=afterok on the array, which writes OUTDIR/sweep.csv and OUTDIR/sweep.json: the
# unsharded sweep's files, byte for byte. PODSIM names the podsim binary (default: podsim on PATH); SBATCH_* sbatch
# options (partition, account, time) come from the environment as sbatch reads them.
#SBATCH --job-name=podsim-sweep
#SBATCH --cpus-per-task=1
#SBATCH --mem=4G
set -euo pipefail
podsim=${PODSIM:-podsim}
if [[ -n ${SLURM_ARRAY_TASK_ID:-} ]]; then
  # One array task: its shard of the points.
  sweep=$1 outdir=$2
  exec "$podsim" sweep "$sweep" --shard "${SLURM_ARRAY_TASK_ID}/${SLURM_ARRAY_TASK_COUNT}" --no-progress \
    --json "$outdir/shard-${SLURM_ARRAY_TASK_ID}.json"
fi
if (($# < 2 || $# > 3)); then
  echo "usage: $0 SWEEP.json OUTDIR [SHARDS]" >&2
  exit 2
fi
sweep=$(realpath "$1") outdir=$(realpath -m "$2") shards=${3:-4}
[[ $shards =~ ^[1-9][0-9]*$ ]] || { echo "$0: SHARDS must be a positive integer, got '$shards'" >&2; exit 2; }
mkdir -p "$outdir"
array=$(sbatch --parsable --array="0-$((shards - 1))" --output="$outdir/shard-%a.log" "$0" "$sweep" "$outdir")
array=${array%%;*}  # --parsable prints "jobid[;cluster]"
files=()
for ((k = 0; k < shards; k++)); do files+=("$outdir/shard-$k.json"); done
merge=$(sbatch --parsable --job-name=podsim-sweep-merge --dependency="afterok:$array" --output="$outdir/merge.log" \
  --wrap="$(printf '%q ' "$podsim" sweep merge "${files[@]}" --csv "$outdir/sweep.csv" --json "$outdir/sweep.json")")
echo "submitted array job ${array} (${shards} shards) and merge job ${merge%%;*}; results in $outdir"
