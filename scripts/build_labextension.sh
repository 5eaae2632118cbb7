#!/usr/bin/env bash
# Build the mcp-notebook JupyterLab extension (labextension/) into
# mcp_notebook/labextension/ (package.json + static/).
#
# Usage: scripts/build_labextension.sh [--dev] [--install]
#   --dev      development build (unminified, with source maps)
#   --install  run `jlpm install` even when node_modules looks current
#
# Needs: node >= 20.19 (for @jupyter/builder) and a Python with the
# `jupyter-builder` package (it provides `jlpm` and `jupyter-builder`).
# The Python is taken from $PYTHON, else .venv/bin/python, else python3.
# Node packages come from the npm registry on the first run (about 1 minute,
# ~420 MB in labextension/node_modules); later builds take a few seconds.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ext="$repo/labextension"
out="$repo/mcp_notebook/labextension"

mode=prod
force_install=0
for arg in "$@"; do
  case "$arg" in
    --dev) mode=dev ;;
    --install) force_install=1 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "build_labextension: unknown option $arg" >&2; exit 2 ;;
  esac
done

# --- Python with jupyter-builder ---------------------------------------
if [[ -n "${PYTHON:-}" ]]; then
  py="$PYTHON"
elif [[ -x "$repo/.venv/bin/python" ]]; then
  py="$repo/.venv/bin/python"
else
  py="$(command -v python3 || command -v python || true)"
fi
if [[ -z "$py" ]] || ! "$py" -c 'import jupyter_builder' 2>/dev/null; then
  echo "build_labextension: need a Python with jupyter-builder: ${py:-python3} -m pip install 'jupyter-builder>=1.3,<2'" >&2
  exit 1
fi
# package.json scripts call `jlpm` and `jupyter-builder`: put the Python's
# scripts directory first on PATH.
pybin="$("$py" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')"
export PATH="$pybin:$PATH"
jlpm=(jlpm)
if ! command -v jlpm >/dev/null 2>&1; then
  jlpm=("$py" -m jupyter_builder.jlpm)
fi

# --- node ---------------------------------------------------------------
if ! command -v node >/dev/null 2>&1; then
  echo "build_labextension: node >= 20.19 is needed (not found on PATH)" >&2
  exit 1
fi
if ! node -e '
  const [a, b] = process.versions.node.split(".").map(Number);
  process.exit((a === 20 && b >= 19) || (a === 22 && b >= 12) || a > 22 ? 0 : 1);
'; then
  echo "build_labextension: node $(node --version) is too old; @jupyter/builder needs ^20.19 or >=22.12" >&2
  exit 1
fi

cd "$ext"

# --- node packages --------------------------------------------------------
state="node_modules/.yarn-state.yml"
if [[ $force_install == 1 || ! -f "$state" || package.json -nt "$state" || yarn.lock -nt "$state" ]]; then
  echo "build_labextension: installing node packages (jlpm install)"
  "${jlpm[@]}" install
fi

# --- build ----------------------------------------------------------------
if [[ $mode == prod ]]; then
  "${jlpm[@]}" build:prod
else
  "${jlpm[@]}" build
fi

if [[ ! -f "$out/package.json" || ! -d "$out/static" ]]; then
  echo "build_labextension: build finished but $out has no package.json/static" >&2
  exit 1
fi
echo "build_labextension: built ($mode) into mcp_notebook/labextension"
