#!/usr/bin/env bash
# Create (or bring up to date) the virtual environment .venv with the pinned versions of
# requirements.txt and rnnrepro itself installed in editable mode. Quick when nothing changed.
#   bash scripts/setup.sh            # then: . .venv/bin/activate
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
venv=.venv
stamp=$venv/.requirements.sha256
wanted=$(cat requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1)

if [ ! -x "$venv/bin/python" ]; then
  echo "setup: creating $venv with $($python --version)"
  "$python" -m venv "$venv"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
  echo "setup: installing pinned requirements (first time: about 2 minutes, 1.5 GB)"
  "$venv/bin/python" -m pip install --quiet -r requirements.txt
  "$venv/bin/python" -m pip install --quiet --no-deps -e .
  echo "$wanted" > "$stamp"
else
  echo "setup: $venv is up to date"
fi
