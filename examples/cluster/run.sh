#!/usr/bin/env bash
# Runs the example on this machine: two ack hosts over ./home on ports 8501 and 8502, and nginx on
# 8500 in front of them (needs nginx, e.g. Debian's nginx-light, and MariaDB on 127.0.0.1:3306).
# The ack of this repository is used once built (pnpm install && pnpm build), else an `ack serve`
# on the PATH. Ctrl-C stops all three.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
built="$here/../../packages/cli/dist/bin.js"
if [ -f "$built" ]; then
  ack() { node "$built" "$@"; }
elif ! command -v ack > /dev/null || ! ack --help 2> /dev/null | grep -q 'ack for Node'; then
  # (An `ack` on the PATH may be another program: the grep-like tool of the same name.)
  echo "run.sh: no ack to run: build it first (pnpm install && pnpm build at the repository root), or put ack on the PATH" >&2
  exit 1
fi
if ! command -v nginx > /dev/null; then
  echo "run.sh: nginx is not installed (Debian: apt-get install nginx-light)" >&2
  exit 1
fi
run="$(mktemp -d)"
sed -e "s#{{DIR}}#$run#g" -e 's#{{PORT}}#8500#' -e 's#{{PORT_A}}#8501#' -e 's#{{PORT_B}}#8502#' "$here/nginx.conf.template" > "$run/nginx.conf"
trap 'kill 0' EXIT
ack serve --app-dir "$here/home/app" --host 127.0.0.1 --port 8501 &
ack serve --app-dir "$here/home/app" --host 127.0.0.1 --port 8502 &
nginx -c "$run/nginx.conf" -p "$run" &
echo "http://127.0.0.1:8500/whoami/api (sign in: http://127.0.0.1:8500/wwwroot/api/dev-account/sign-in)"
wait
