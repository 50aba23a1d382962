#!/usr/bin/env bash
# Starts the built `bulwark` on a fresh SQLite database for the browser tests, with a known
# administrator and a viewer, an SMTP server (smtp-sink.mjs) that keeps what it receives in
# .run/mail, and an OpenID provider (oidc/provider.mjs) to sign in with. Called by Playwright's webServer; the Makefile passes BULWARK_BIN, whose site is
# built in (BULWARK_SITE_ROOT, when set, serves one from disk instead).
set -euo pipefail
cd "$(dirname "$0")"
: "${BULWARK_BIN:?set BULWARK_BIN to the built bulwark binary (make test does)}"

run_dir=.run
rm -rf "$run_dir"
mkdir -p "$run_dir"
export DATABASE_URL="sqlite://$PWD/$run_dir/e2e.db?mode=rwc"
export BULWARK_ADDR="127.0.0.1:${BULWARK_E2E_PORT:-3100}"
export BULWARK_ADMIN_PASSWORD="admin-e2e-password"
[ -z "${BULWARK_SITE_ROOT:-}" ] || export BULWARK_SITE_ROOT
export BULWARK_SECRET_KEY_FILE="$PWD/$run_dir/secret.key"
smtp_port="${BULWARK_E2E_SMTP_PORT:-3125}"
export BULWARK_SMTP_URL="smtp://127.0.0.1:$smtp_port"
export BULWARK_PUBLIC_URL="http://127.0.0.1:${BULWARK_E2E_PORT:-3100}"
# The log viewer test prints about 15 MB: all of it is kept.
export BULWARK_RUN_LOG_MAX_MB=50

BULWARK_E2E_SMTP_PORT="$smtp_port" node smtp-sink.mjs "$run_dir/mail" &

oidc_port="${BULWARK_E2E_OIDC_PORT:-3126}"
OIDC_PORT="$oidc_port" node oidc/provider.mjs > "$run_dir/oidc.log" 2>&1 &
printf 'bulwark-secret\n' > "$run_dir/oidc-client-secret"
export BULWARK_OIDC_ISSUER="http://127.0.0.1:$oidc_port"
export BULWARK_OIDC_CLIENT_ID="bulwark"
export BULWARK_OIDC_CLIENT_SECRET="$PWD/$run_dir/oidc-client-secret"
export BULWARK_OIDC_LABEL="Example SSO"
export BULWARK_OIDC_ADMIN_GROUPS='["ops"]'

"$BULWARK_BIN" migrate
# `make screenshots` wants something to look at.
if [ -n "${BULWARK_E2E_SEED_DEMO:-}" ]; then
  "$BULWARK_BIN" jobs seed-demo
  "$BULWARK_BIN" traffic generate --days 3 --per-day 3000
fi
echo "viewer-e2e-password" | "$BULWARK_BIN" user add --username viewer --role viewer
exec "$BULWARK_BIN" serve
