"""One test's life through the Python kit (clients/python, docs/clients.md#python), timed as a test suite sees it.

Usage: python3 bench/lib/python-kit-life.py URL N ; prints one JSON line.

Each life: Server(URL).create_session(label=<its own label>) (frozen at START_CLOCK, as the pytest plugin's
sessions), then 9 requests through the session (signed /v1 calls and its control plane):

  1. GET  /v1/accounts
  2. POST /v1/sandbox/accounts/acct_acme_usd/deposits   (a simulated deposit of 1250.00 USD, di_acme_usd_ach)
  3. POST /_emulator/settle                              (session.settle())
  4. GET  /v1/transactions/{the deposit}
  5. POST /v1/transaction-intents                        (100.00 USD from acct_acme_usd to ben_globex / bi_globex_usd)
  6. POST /v1/transaction-intents/{id}/commit
  7. POST /_emulator/settle
  8. GET  /v1/transaction-intents/{id}
  9. GET  /v1/transactions?accountId=acct_acme_usd

then Server.end_label(label), which must end exactly that session. 3 warm-up lives, then N timed ones. Every
answer's status (and the bits of the body the next step needs) is checked: anything unexpected exits non-zero
with the status and the body, so the figures cannot come from error answers. Standard library only.

Printed: the lives' median, p90 (nearest rank), min and max in ms; the medians of their three parts (create,
the 9 requests, end); and firstRequestMs, the median of request 1 alone (part of the 9): the first statements a
session's new database connection prepares are paid there (docs/sessions.md#how-fast).
"""

import json
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python" / "src"))

from service_sandbox import Server  # noqa: E402  (the kit, from the checkout)

DEPOSIT = {"depositInstructionId": "di_acme_usd_ach", "amount": "1250.00", "reference": "INV-2026-0311", "counterpartyName": "Northwind Traders"}
CREDIT = {"instrumentType": "BANK_ACCOUNT", "beneficiaryId": "ben_globex", "instrumentId": "bi_globex_usd"}
JOURNEY_REQUESTS = 9


def fail(what, answer):
    body = answer.body[:600].decode(errors="replace") if isinstance(answer.body, (bytes, bytearray)) else repr(answer)
    sys.stderr.write(f"python-kit-life: {what}: unexpected answer {answer.status}: {body}\n")
    sys.exit(1)


def expect(answer, status, what):
    if answer.status != status:
        fail(what, answer)
    return answer.json()


def journey(session):
    """The 9 requests (JOURNEY_REQUESTS); returns the first one's ms."""
    t0 = time.perf_counter()
    accounts = expect(session.get("/v1/accounts"), 200, "GET /v1/accounts")
    first_ms = (time.perf_counter() - t0) * 1000
    if not any(account["id"] == "acct_acme_usd" for account in accounts["data"]):
        sys.exit(f"python-kit-life: GET /v1/accounts lists no acct_acme_usd: {accounts}")

    deposited = session.post("/v1/sandbox/accounts/acct_acme_usd/deposits", DEPOSIT)
    expect(deposited, 202, "POST /v1/sandbox/accounts/acct_acme_usd/deposits")
    txn = deposited.headers["Location"].rsplit("/", 1)[-1]

    session.settle()  # raises SandboxError (exit 1 with the answer) unless 200 and settled

    deposit = expect(session.get(f"/v1/transactions/{txn}"), 200, f"GET /v1/transactions/{txn}")
    if deposit["id"] != txn:
        sys.exit(f"python-kit-life: GET /v1/transactions/{txn} answered transaction {deposit['id']}")

    key = f"bench-py-{uuid.uuid4().hex[:12]}"
    intent = expect(session.post("/v1/transaction-intents", {"idempotencyKey": key, "debitAccountId": "acct_acme_usd", "creditAmount": "100.00", "credit": CREDIT}), 201, "POST /v1/transaction-intents")
    committed = expect(session.post(f"/v1/transaction-intents/{intent['id']}/commit", {"idempotencyKey": key}), 200, "POST .../commit")
    if committed["status"] != "COMMITTED":
        sys.exit(f"python-kit-life: commit answered status {committed['status']}")

    session.settle()

    read = expect(session.get(f"/v1/transaction-intents/{intent['id']}"), 200, f"GET /v1/transaction-intents/{intent['id']}")
    if read["status"] != "COMMITTED":
        sys.exit(f"python-kit-life: intent {intent['id']} reads {read['status']}")

    listed = expect(session.get("/v1/transactions?accountId=acct_acme_usd"), 200, "GET /v1/transactions?accountId=acct_acme_usd")
    ids = {item["id"] for item in listed["data"]}
    if not {txn, committed["relatedTransactionId"]} <= ids:
        sys.exit(f"python-kit-life: the list lacks {txn} or {committed['relatedTransactionId']}: {sorted(ids)}")
    return first_ms


def life(server, run_id, index):
    """One life: its three parts in ms, and the journey's first request."""
    label = f"bench-py-{run_id}-{index}"
    t0 = time.perf_counter()
    session = server.create_session(label=label)  # raises SandboxError unless 201
    t1 = time.perf_counter()
    first_ms = journey(session)
    t2 = time.perf_counter()
    ended = server.end_label(label)  # raises SandboxError unless 200
    t3 = time.perf_counter()
    if ended != [session.id]:
        sys.exit(f"python-kit-life: ending label {label} ended {ended}, not [{session.id}]")
    return (t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000, first_ms


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: python3 bench/lib/python-kit-life.py URL N")
    server = Server(sys.argv[1])
    runs = int(sys.argv[2])
    if not server.healthy():
        sys.exit(f"python-kit-life: {server.url} does not answer /_emulator/health")
    run_id = uuid.uuid4().hex[:8]
    for index in range(3):
        life(server, run_id, f"warm{index}")
    parts = [life(server, run_id, index) for index in range(runs)]
    totals = sorted(sum(part[:3]) for part in parts)
    # nearest rank, as bench/run.mjs
    p90 = totals[min(len(totals) - 1, max(0, -(-90 * len(totals) // 100) - 1))]
    r = lambda value: round(value, 2)  # noqa: E731
    print(json.dumps({
        "runs": runs,
        "medianMs": r(statistics.median(totals)),
        "p90Ms": r(p90),
        "minMs": r(totals[0]),
        "maxMs": r(totals[-1]),
        "requestsPerLife": JOURNEY_REQUESTS + 2,
        "journeyRequests": JOURNEY_REQUESTS,
        "steps": {
            "createSessionMs": r(statistics.median(p[0] for p in parts)),
            "journeyMs": r(statistics.median(p[1] for p in parts)),
            "endMs": r(statistics.median(p[2] for p in parts)),
        },
        # part of journeyMs: the first request into the new session (it waits while the server tops its pool up)
        "firstRequestMs": r(statistics.median(p[3] for p in parts)),
        "python": sys.version.split()[0],
    }))


if __name__ == "__main__":
    main()
