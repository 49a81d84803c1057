#!/usr/bin/env bash
# Get finished results without running anything again: `dvc pull`, then, when DVC finds every
# stage up to date (the pulled results are those of this commit's code, settings and data), mark
# Snakemake's outputs up to date in the order of its DAG (`snakemake --touch`). `dvc pull` gives
# files new times in any order, and Snakemake, which has no record of them in a fresh clone, would
# otherwise take an input newer than its output for a change and redo analyses, tables and
# reports (at the paper scale: decode hundreds of trained models again).
#
#   bash scripts/pull.sh            # with the project's environment (. .venv/bin/activate)
#   bash scripts/pull.sh -r REMOTE  # arguments go to `dvc pull`
#
# When DVC says a stage changed since the results were pushed, nothing is touched: Snakemake then
# redoes what the change reaches, and only that.
set -euo pipefail
cd "$(dirname "$0")/.."

dvc pull "$@"
if dvc status --quiet; then
  snakemake all --profile profiles/local --touch --quiet
  echo "pull: every stage is up to date; Snakemake's outputs are marked so (snakemake -n all: nothing to do)"
else
  echo "pull: DVC finds stages changed since these results (dvc status); Snakemake will redo what they reach" >&2
fi
