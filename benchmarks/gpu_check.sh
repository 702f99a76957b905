#!/usr/bin/env bash
# The GPU check (benchmarks/gpu_check.py): run it first on a machine with a GPU, unmodified.
#   bash benchmarks/gpu_check.sh [--dry-run] [--out FILE]
# It installs what is missing (a CUDA build of torch from the registry where none is installed,
# unison's own dependencies), points UNISON_DATA_DIR at MNIST, and runs the three sections
# (tests, CNN to 99%, GPT tokens/s vs DDP) in under 10 minutes on one GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

# torch: keep the one installed (a GPU machine's image has a CUDA build); else the registry's default
# build for Linux, which is the CUDA one.
"$PY" -c "import torch" 2>/dev/null || "$PY" -m pip install --quiet torch || { echo "gpu_check: no torch and none could be installed" >&2; exit 2; }
# unison's dependencies that may be missing; the package itself runs from src/ (no install needed)
for mod in numpy grpc cloudpickle pytest pytest_timeout; do
  "$PY" -c "import $mod" 2>/dev/null && continue
  pkg=${mod/grpc/grpcio}; pkg=${pkg/pytest_timeout/pytest-timeout}
  "$PY" -m pip install --quiet "$pkg" || echo "gpu_check: could not install $pkg; the sections that need it will say so" >&2
done
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
# MNIST: $UNISON_DATA_DIR, else ../shared/data beside the checkout, else a copy carried in .data/
if [ -z "${UNISON_DATA_DIR:-}" ]; then
  for d in ../shared/data .data; do [ -d "$d/mnist" ] && export UNISON_DATA_DIR="$PWD/$d" && break; done
fi
exec "$PY" benchmarks/gpu_check.py "$@"
