#!/usr/bin/env bash
# Runs the example on this machine: two ack hosts over ./home on ports 8501 and 8502, and nginx on
# 8500 in front of them (needs nginx, e.g. Debian's nginx-light, and MariaDB on 127.0.0.1:3306).
# Ctrl-C stops all three.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
run="$(mktemp -d)"
sed -e "s#{{DIR}}#$run#g" -e 's#{{PORT}}#8500#' -e 's#{{PORT_A}}#8501#' -e 's#{{PORT_B}}#8502#' "$here/nginx.conf.template" > "$run/nginx.conf"
trap 'kill 0' EXIT
ack serve --app-dir "$here/home/app" --host 127.0.0.1 --port 8501 &
ack serve --app-dir "$here/home/app" --host 127.0.0.1 --port 8502 &
nginx -c "$run/nginx.conf" -p "$run" &
echo "http://127.0.0.1:8500/whoami/api (sign in: http://127.0.0.1:8500/wwwroot/api/dev-account/sign-in)"
wait
