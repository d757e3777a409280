#!/usr/bin/env bash
# Continue the BOS² reproduction where its committed stores end, one session at a time.
#
#   tools/bos2_continue.sh           start (in the background) what is left, in this order:
#                                    CIFAR-10 clip, MNIST clip, MNIST rescale, each with --jobs 2
#   tools/bos2_continue.sh --sync    bring records/bos2 up to the running stores, rewrite the
#                                    tables of records/bos2/tables.md and commit them
#
# Run folders live under $BOS2_RUNS (default /work/runs). A run folder whose runs.jsonl is missing
# or shorter than the committed store starts again from the committed store; the reproduction
# resumes from its runs.jsonl, and the sync refuses a run file that does not continue its store.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${BOS2_RUNS:-/work/runs}
# name of the store in records/bos2, run folder, dataset, range mode (the order they run in)
STORES=(
  "cifar10-clip bos2-cifar cifar10 clip"
  "mnist-clip bos2-mnist-clip mnist clip"
  "mnist-rescale bos2-rescale mnist rescale"
)
METHODS_cifar10_clip="bos2 bayesopt bos2-nostop genattack pgd"  # the cheap store has ZOO, AutoZOOM
METHODS_mnist_clip="bos2 bayesopt bos2-nostop"                   # the cheap store has the rest
METHODS_mnist_rescale="bos2 bayesopt bos2-nostop genattack zoo autozoom pgd"

if [[ ${1:-} == --sync ]]; then
  updates=()
  for entry in "${STORES[@]}"; do
    read -r store folder dataset mode <<<"$entry"
    name=${dataset/cifar10/cifar}_${mode}
    [[ -f $RUNS/$folder/runs.jsonl ]] && updates+=(--update-from "$name=$RUNS/$folder/runs.jsonl")
  done
  python benchmarks/bos2_tables.py --docs records/bos2/tables.md "${updates[@]}" \
    --earlier records/bos2/bos2-first-machine-tables.json --cheap records/bos2/bos2-cheap-clip.jsonl \
    mnist_rescale=records/bos2/bos2-mnist-rescale.jsonl:mnist \
    cifar_clip=records/bos2/bos2-cifar10-clip.jsonl:cifar10 \
    mnist_clip=records/bos2/bos2-mnist-clip.jsonl:mnist
  git add records/bos2
  git diff --cached --quiet || git commit -qm "records/bos2: BOS² stores, sync $(date -u +%H:%M)"
  exit 0
fi

if pgrep -f "frontierbo reproduce bos2" >/dev/null; then
  echo "a BOS² reproduction is already running; not starting another" >&2
  exit 1
fi
mkdir -p "$RUNS/logs"
chain=()
for entry in "${STORES[@]}"; do
  read -r store folder dataset mode <<<"$entry"
  committed=records/bos2/bos2-$store.jsonl
  run=$RUNS/$folder/runs.jsonl
  mkdir -p "$RUNS/$folder"
  if [[ ! -f $run ]] || (( $(wc -l <"$run") < $(wc -l <"$committed") )); then
    cp "$committed" "$run"
  fi
  methods=METHODS_${dataset}_${mode}
  chain+=("frontierbo reproduce bos2 --datasets $dataset --profile scalable --range-mode $mode \
--methods ${!methods} --jobs 2 --out $RUNS/$folder > $RUNS/logs/$folder.log 2>&1")
done
joined=$(printf ' && %s' "${chain[@]}")
nohup bash -c "${joined# && }" >/dev/null 2>&1 &
echo "started: ${joined# && }"
