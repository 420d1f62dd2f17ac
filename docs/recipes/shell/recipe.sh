#!/usr/bin/env bash
# service-sandbox from bash with curl and openssl only: create a session with the run's label, sign a GET and a
# POST, move the session's clock, settle it, delete the session. Every step checks its answer and exits non-zero
# on a wrong one.
# Guide: docs/recipes.md#shell. Run: SANDBOX_URL=http://127.0.0.1:4010 bash recipe.sh
set -euo pipefail

SANDBOX_URL=${SANDBOX_URL:-http://127.0.0.1:4010}
# The run's label (a CI job id, say): every session of the run carries it, and one call ends them all
# (docs/sessions.md#labels).
SANDBOX_LABEL=${SANDBOX_LABEL:-shell-$(date +%s)-$$}
API_KEY=pk_sandbox_single         # the session's credentials.single (the default fixtures)
SECRET=sk_sandbox_single_secret
PROGRAM_ID=prg_sandbox
# A server started with --admin-token wants it on every control-plane call.
ADMIN=()
[ -z "${SANDBOX_ADMIN_TOKEN-}" ] || ADMIN=(-H "X-Admin-Token: ${SANDBOX_ADMIN_TOKEN}")

fail() { echo "not ok - $*" >&2; exit 1; }
ok() { echo "ok - $*"; }
# field NAME JSON: the first string value of "NAME" in JSON (enough for these answers; jq in your own scripts)
field() { grep -o "\"$1\":\"[^\"]*\"" <<<"$2" | head -1 | cut -d'"' -f4 || true; }
# Every call prints the body, then the HTTP status on a last line of its own; these split the two.
status_of() { tail -n 1 <<<"$1"; }
body_of() { sed '$d' <<<"$1"; }

# 1. A session: its own database, clock and webhooks, under its own path prefix. Frozen at a fixed instant,
#    so nothing moves until the clock is advanced.
answer=$(curl -sS ${ADMIN[@]+"${ADMIN[@]}"} -X POST "$SANDBOX_URL/_emulator/sessions" -H 'Content-Type: application/json' \
  -d "{\"clock\":\"2026-03-01T12:00:00.000Z\",\"label\":\"${SANDBOX_LABEL}\"}" -w '\n%{http_code}')
[ "$(status_of "$answer")" = 201 ] || fail "create a session: $answer"
SESSION_ID=$(field id "$(body_of "$answer")")
BASE=$(field baseUrl "$(body_of "$answer")")          # http://127.0.0.1:4010/_sessions/ses_...
PREFIX=$(sed -E 's#^[a-z]+://[^/]+##' <<<"$BASE")     # /_sessions/ses_...: part of every signed target
# Never leave a session behind, even on failure: every session with the run's label ends at once.
end_run() { curl -sS ${ADMIN[@]+"${ADMIN[@]}"} -o /dev/null -X DELETE "$SANDBOX_URL/_emulator/sessions?label=${SANDBOX_LABEL}" || true; }
trap end_run EXIT
ok "session $SESSION_ID at $BASE"

# signed METHOD PATH [BODY]: a request signed as docs/authentication.md says: lower-case hex HMAC-SHA256, keyed
# with the secret, of apiKey + timestamp + METHOD + the target as sent (prefix, path, query) + the raw body.
signed() {
  local method=$1 path=$2 body=${3-} ts sig
  ts=$(($(date +%s) * 1000))
  sig=$(printf '%s' "${API_KEY}${ts}${method}${PREFIX}${path}${body}" | openssl dgst -sha256 -hmac "$SECRET" | awk '{print $NF}')
  local args=(-sS -X "$method" "${BASE}${path}" -w '\n%{http_code}'
    -H "X-Service-Api-Key: ${API_KEY}" -H "X-Service-Timestamp: ${ts}"
    -H "X-Service-Program-Id: ${PROGRAM_ID}" -H "X-Service-Signature: ${SIG_OVERRIDE:-$sig}")
  [ -z "$body" ] || args+=(-H 'Content-Type: application/json' --data-raw "$body")
  curl "${args[@]}"
}

# 2. A signed GET with a query: the accounts of usr_acme.
answer=$(signed GET '/v1/accounts?pageSize=2')
[ "$(status_of "$answer")" = 200 ] || fail "GET /v1/accounts: $answer"
[ "$(field id "$(body_of "$answer")")" = acct_acme_usd ] || fail "first account is not acct_acme_usd: $answer"
ok "signed GET /v1/accounts?pageSize=2"

# 3. A signed POST: simulate an incoming ACH deposit. The answer's message names the new transaction.
DEPOSIT='{"depositInstructionId":"di_acme_usd_ach","amount":"1250.00","reference":"INV-2026-0311"}'
answer=$(signed POST /v1/sandbox/accounts/acct_acme_usd/deposits "$DEPOSIT")
[ "$(status_of "$answer")" = 202 ] || fail "simulate a deposit: $answer"
TXN=$(grep -o 'txn_[A-Za-z0-9_]*' <<<"$answer" | head -1)
[ -n "$TXN" ] || fail "no transaction id in: $answer"
answer=$(signed GET "/v1/transactions/$TXN")
[ "$(field status "$(body_of "$answer")")" = PENDING ] || fail "$TXN should be PENDING: $answer"
ok "signed POST: deposit $TXN is PENDING"

# 4. Move the session's clock on by 1 s: the deposit completes before the call answers.
answer=$(curl -sS ${ADMIN[@]+"${ADMIN[@]}"} -X POST "$BASE/_emulator/clock" -H 'Content-Type: application/json' -d '{"advanceMs":1000}' -w '\n%{http_code}')
[ "$(status_of "$answer")" = 200 ] || fail "advance the clock: $answer"
[ "$(field now "$(body_of "$answer")")" = 2026-03-01T12:00:01.000Z ] || fail "clock after the advance: $answer"
answer=$(signed GET "/v1/transactions/$TXN")
[ "$(field status "$(body_of "$answer")")" = COMPLETED ] || fail "$TXN should be COMPLETED: $answer"
ok "clock advanced 1000 ms: $TXN is COMPLETED"

# 4b. Settle: answers once every job due now has run and every webhook due now was attempted and answered
#     (docs/control-plane.md#settle). Wait for webhooks with this, never with sleep.
answer=$(curl -sS ${ADMIN[@]+"${ADMIN[@]}"} -X POST "$BASE/_emulator/settle" -H 'Content-Type: application/json' -d '{"timeoutMs":5000}' -w '\n%{http_code}')
[ "$(status_of "$answer")" = 200 ] || fail "settle: $answer"
grep -q '"settled":true' <<<"$answer" || fail "the session did not settle: $answer"
ok "settled"

# 5. A wrong signature is a 401 with the error body.
answer=$(SIG_OVERRIDE=0000000000000000000000000000000000000000000000000000000000000000 signed GET /v1/accounts)
[ "$(status_of "$answer")" = 401 ] || fail "a wrong signature should be 401: $answer"
[ "$(field errorCode "$(body_of "$answer")")" = UNAUTHORIZED ] || fail "401 without errorCode UNAUTHORIZED: $answer"
ok "a wrong signature: 401 UNAUTHORIZED"

# 6. Delete the session; its URLs are gone.
answer=$(curl -sS ${ADMIN[@]+"${ADMIN[@]}"} -X DELETE "$SANDBOX_URL/_emulator/sessions/$SESSION_ID" -w '\n%{http_code}')
[ "$(status_of "$answer")" = 204 ] || fail "delete the session: $answer"
answer=$(signed GET /v1/accounts)
[ "$(status_of "$answer")" = 404 ] || fail "an ended session should answer 404: $answer"
ok "session $SESSION_ID deleted"

# 7. The run's label lists nothing left (the EXIT trap ends whatever a failed run leaves).
answer=$(curl -sS ${ADMIN[@]+"${ADMIN[@]}"} "$SANDBOX_URL/_emulator/sessions?label=${SANDBOX_LABEL}" -w '\n%{http_code}')
[ "$(status_of "$answer")" = 200 ] && grep -q '"data":\[\]' <<<"$answer" || fail "sessions left with label ${SANDBOX_LABEL}: $answer"
ok "no session left with label ${SANDBOX_LABEL}"
