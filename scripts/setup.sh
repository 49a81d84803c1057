#!/usr/bin/env bash
# Create (or bring up to date) the virtual environment .venv with the pinned versions of
# requirements.txt and rnnrepro itself installed in editable mode. Quick when nothing changed.
#   bash scripts/setup.sh            # then: . .venv/bin/activate
#
# The packages are installed by uv (pinned below, itself installed by pip), which downloads,
# unpacks and byte-compiles in parallel: on this project's 2-core machine 1 minute where pip
# took 3. uv does not read pip's configuration, so pip's find-links, index URLs, constraints
# and certificate (`pip config list`, PIP_* variables included) are passed on to it, and it
# takes the best version from every index, as pip does (uv's default stops at the first
# index that has the package): scripts/pip_settings_for_uv.py. Where uv cannot be had or
# fails, pip installs the same requirements (RNNREPRO_SETUP_PIP=1: always pip).
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
venv=.venv
stamp=$venv/.requirements.sha256
wanted=$(cat requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1)
uv_version=0.13.9

install_with_uv() {
  "$venv/bin/python" -m pip install --quiet "uv==$uv_version" || return 1
  # captured before use, so that a failure to read pip's settings stops uv (which without them
  # could take another torch build from PyPI) instead of leaving it with none
  local listed cert args=() line
  listed=$("$venv/bin/python" scripts/pip_settings_for_uv.py) || return 1
  cert=$("$venv/bin/python" scripts/pip_settings_for_uv.py --cert) || return 1
  while IFS= read -r line; do  # (not mapfile: macOS's bash 3.2 has none)
    if [ -n "$line" ]; then args+=("$line"); fi
  done <<< "$listed"
  if [ -n "$cert" ] && [ -z "${SSL_CERT_FILE:-}" ]; then
    export SSL_CERT_FILE="$cert"  # uv's name for pip's `cert`
  fi
  "$venv/bin/uv" pip install --quiet --python "$venv/bin/python" --compile-bytecode \
    --index-strategy unsafe-best-match ${args[@]+"${args[@]}"} -r requirements.txt || return 1
  "$venv/bin/uv" pip install --quiet --python "$venv/bin/python" --index-strategy unsafe-best-match \
    ${args[@]+"${args[@]}"} --no-deps -e . || return 1
}

install_with_pip() {
  "$venv/bin/python" -m pip install --quiet -r requirements.txt
  "$venv/bin/python" -m pip install --quiet --no-deps -e .
}

if [ ! -x "$venv/bin/python" ]; then
  echo "setup: creating $venv with $($python --version)"
  "$python" -m venv "$venv"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
  echo "setup: installing pinned requirements (first time: 1-3 minutes, 1.5 GB)"
  if [ -n "${RNNREPRO_SETUP_PIP:-}" ]; then
    install_with_pip
  elif ! install_with_uv; then
    echo "setup: uv $uv_version could not install them (above); installing with pip instead"
    install_with_pip
  fi
  echo "$wanted" > "$stamp"
else
  echo "setup: $venv is up to date"
fi
