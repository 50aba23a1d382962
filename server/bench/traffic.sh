#!/usr/bin/env bash
# `make bench-traffic`: the traffic pipeline's numbers, measured side by side in one run.
#
#   1. the layer: requests/s and latency of the same page on two servers, one counting and one
#      not (wrk from a second process on loopback, alternating rounds);
#   2. the collect endpoint: hits/s, checked against what `traffic flush` then writes;
#   3. `traffic import` on a generated 1,000,000-line log, beside GoAccess on the same file;
#   4. `bench traffic`: recording cost per request, flush of 1,000,000 hits on SQLite and
#      PostgreSQL (when BULWARK_TEST_POSTGRES_URL is set).
#
# Needs BIN (a release `bulwark`) and SITE; installs Debian's wrk and goaccess when missing.
set -euo pipefail
: "${BIN:?set BIN to a bulwark binary (make bench-traffic does)}"
: "${SITE:?set SITE to the built site}"
LINES=${LINES:-1000000}
DURATION=${DURATION:-8s}

for tool in wrk goaccess; do
  command -v "$tool" >/dev/null || {
    if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
    $SUDO apt-get install -y -qq "$tool" >/dev/null
  }
done

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

start() { # name port capture
  DATABASE_URL="sqlite://$work/$1.db?mode=rwc" BULWARK_ADDR="127.0.0.1:$2" BULWARK_SITE_ROOT="$SITE" \
    BULWARK_TRAFFIC_CAPTURE="$3" BULWARK_ENGINE=false BULWARK_NODE_ID="$1" \
    BULWARK_ADMIN_PASSWORD=bench-password "$BIN" serve >"$work/$1.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    curl -fs "http://127.0.0.1:$2/readyz" >/dev/null && return
    sleep 0.1
  done
  echo "server $1 did not start:"; cat "$work/$1.log"; exit 1
}

start capture-on 3201 true
start capture-off 3202 false

# wrk's summary → "req/s avg p50 p99"
measure() { # url [extra wrk args]
  local url=$1; shift
  wrk -t1 -c16 -d"$DURATION" --latency "$@" "$url" | awk '
    /Requests\/sec/ {rps=$2}
    /^    Latency/ {avg=$2}
    /^     50%/ {p50=$2}
    /^     99%/ {p99=$2}
    END {printf "%10s req/s  avg %8s  p50 %8s  p99 %8s\n", rps, avg, p50, p99}'
}

echo "== 1. the layer: GET /login (server-rendered page), 16 connections, $DURATION per round,"
echo "   alternating servers (the spread between rounds of one server is the noise)"
wrk -t1 -c16 -d2s http://127.0.0.1:3201/login >/dev/null
wrk -t1 -c16 -d2s http://127.0.0.1:3202/login >/dev/null
for round in 1 2 3; do
  printf "round %s, without the layer: " "$round"; measure http://127.0.0.1:3202/login
  printf "round %s, with the layer:    " "$round"; measure http://127.0.0.1:3201/login
done

DATABASE_URL="sqlite://$work/capture-on.db?mode=rwc" "$BIN" traffic flush >/dev/null

echo
echo "== 2. the collect endpoint: POST /api/collect"
cat >"$work/collect.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"url":"https://shop.example/products/42","referrer":"https://www.google.com/","lang":"en-US"}'
wrk.headers["Content-Type"] = "text/plain;charset=UTF-8"
wrk.headers["User-Agent"] = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
local done = 0
response = function(status) if status == 204 then done = done + 1 end end
LUA
wrk -t1 -c16 -d"$DURATION" --latency -s "$work/collect.lua" http://127.0.0.1:3201/api/collect |
  awk '/requests in/ {total=$1} /Requests\/sec/ {rps=$2} /^     99%/ {p99=$2}
       END {printf "%10s hits/s  p99 %s  (%s requests)\n", rps, p99, total}'
echo "what the server then wrote (hits must equal the requests):"
DATABASE_URL="sqlite://$work/capture-on.db?mode=rwc" "$BIN" traffic flush | tail -1

echo
echo "== 3. traffic import vs GoAccess, $LINES lines"
"$BIN" bench traffic --write-log "$work/access.log" --lines "$LINES"
ls -l "$work/access.log" | awk '{printf "log size: %.0f MB\n", $5/1e6}'
export DATABASE_URL="sqlite://$work/import.db?mode=rwc"
"$BIN" migrate >/dev/null
t0=$(date +%s.%N)
"$BIN" traffic import "$work/access.log" | grep -E "lines read|hits recorded|rows written|excluded  |time"
t1=$(date +%s.%N)
goaccess "$work/access.log" --log-format=COMBINED --no-global-config --no-progress -o "$work/report.json" 2>/dev/null
t2=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v c="$t2" -v n="$LINES" 'BEGIN {
  printf "bulwark traffic import: %6.2f s  %9.0f lines/s (parse, classify, write to SQLite)\n", b-a, n/(b-a);
  printf "goaccess (JSON report): %6.2f s  %9.0f lines/s (parse and report, in memory)\n", c-b, n/(c-b) }'
unset DATABASE_URL

echo
echo "== 4. recording cost and flushes of 1,000,000 hits"
"$BIN" bench traffic
