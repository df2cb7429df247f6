#!/usr/bin/env bash
# Makes, once, what the export and analysis tests check systole's output with, and prints the venv's python:
#   garmin-fit-sdk, fitdecode   Garmin's own FIT decoder and an independent one (FIT files)
#   fit-tool                     an encoder independent of systole's, for the FIT files the import tests read
#   xmlschema                    validates TCX against Garmin's TrainingCenterDatabase v2 schema
#   neurokit2                    HRV and Lipponen & Tarvainen artifact correction, the reference for ours
#                                (with the numpy, pandas and scipy it was checked with)
#   prometheus-client            the Prometheus text-format parser /metrics is read with
#   playwright, pillow           drive Debian's chromium (headless) through the web page and the overlay, and read
#                                the overlay's screenshot (Playwright's own browser download is not used)
#   paho-mqtt                    subscribes to the MQTT broker the MQTT tests start
#   pyedflib, mne                two independent EDF+ readers the ECG export is read back with
# and Garmin's TCX schema itself, as Debian's pytrainer package ships it (downloaded, not installed), beside the venv.
# Safe to run again and from several tests at once (a lock); the tests call it, so does install-deps.sh.
#
# usage: scripts/python-tools.sh [--schema]   (--schema prints the TCX schema's path instead)
set -euo pipefail
root=${SYSTOLE_PYTHON_TOOLS:-$HOME/.cache/systole-python-tools}
# neurokit2's numpy, pandas and scipy pinned too: the HRV test compares corrected beat positions exactly, and
# pandas' rolling quantiles and numpy's sums decide them.
packages=(garmin-fit-sdk==21.218.0 fitdecode==0.11.0 xmlschema==4.3.2 neurokit2==0.2.13 numpy==2.4.6 pandas==2.3.3 scipy==1.17.1
  prometheus-client==0.23.1 playwright==1.65.2 pillow==13.0.0 paho-mqtt==2.2.0 pyedflib==0.1.42 mne==1.13.2
  fit-tool==0.9.16)
mkdir -p "$root"
exec 9>"$root/.lock"
flock 9

stamp="$root/venv/.systole-packages"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "${packages[*]}" ]; then
  echo "python-tools: installing ${packages[*]} into $root/venv" >&2
  python3 -m venv "$root/venv" >&2
  "$root/venv/bin/python" -m pip install -q --disable-pip-version-check "${packages[@]}" >&2
  echo "${packages[*]}" >"$stamp"
fi

schema="$root/TrainingCenterDatabasev2.xsd"
if [ ! -s "$schema" ]; then
  echo "python-tools: fetching Garmin's TCX schema (Debian package pytrainer, not installed)" >&2
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && apt-get download -q pytrainer >&2 2>/dev/null) || {
    apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 && (cd "$work" && apt-get download -q pytrainer >&2)
  }
  dpkg-deb -x "$work"/pytrainer_*.deb "$work/x"
  cp "$work/x/usr/share/pytrainer/schemas/GarminTrainingCenterDatabase_v2.xsd" "$schema.part"
  mv "$schema.part" "$schema"
fi

if [ "${1:-}" = --schema ]; then echo "$schema"; else echo "$root/venv/bin/python"; fi
