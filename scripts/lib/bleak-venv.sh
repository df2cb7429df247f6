# Sourced by the benchmarks that run bleak beside systoled. ensure_bleak_venv: a venv with bleak from PyPI (made or
# completed once, under the user's cache), and VENV set to it.
ensure_bleak_venv() {
  VENV=${XDG_CACHE_HOME:-$HOME/.cache}/systole-bench/venv
  if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import bleak" 2> /dev/null; then
    python3 -m venv "$VENV" >&2
    "$VENV/bin/pip" install --quiet --disable-pip-version-check bleak >&2
  fi
}
