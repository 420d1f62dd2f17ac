"""Tests against service-sandbox, one fresh session each (fixtures in conftest.py; guide: docs/recipes.md#python).

Run: pytest -n 4 docs/recipes/python
"""

import json
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from urllib.parse import urlsplit

from conftest import START_CLOCK, http_send, run_label, sign

ACME_ACCOUNTS = {"acct_acme_usd", "acct_acme_eur", "acct_acme_usdc", "acct_acme_gbp"}
DEPOSIT = {"depositInstructionId": "di_acme_usd_ach", "amount": "1250.00", "reference": "INV-2026-0311", "counterpartyName": "Northwind Traders"}


def balance(sandbox, account_id):
    answer = sandbox.signed("GET", f"/v1/accounts/{account_id}")
    assert answer.status == 200, answer
    return Decimal(answer.json()["balances"]["current"])


def simulate_deposit(sandbox, body=DEPOSIT):
    """POST /v1/sandbox/accounts/acct_acme_usd/deposits; the new transaction's id, from the 202's
    Location: {session prefix}/v1/transactions/{id} (docs/money-in.md#simulated-deposits)."""
    answer = sandbox.signed("POST", "/v1/sandbox/accounts/acct_acme_usd/deposits", body)
    assert answer.status == 202, answer
    return answer.headers["Location"].rsplit("/", 1)[-1]


def test_lists_the_fixture_accounts(sandbox):
    answer = sandbox.signed("GET", "/v1/accounts")
    assert answer.status == 200, answer
    assert {account["id"] for account in answer.json()["data"]} == ACME_ACCOUNTS

    # The query is part of the signed target, exactly as sent.
    page = sandbox.signed("GET", "/v1/accounts?pageSize=2")
    assert page.status == 200, page
    assert [account["id"] for account in page.json()["data"]] == ["acct_acme_usd", "acct_acme_eur"]


def test_a_multi_user_key_acts_for_the_user_it_names(sandbox):
    answer = sandbox.signed("GET", "/v1/accounts", user="usr_jane")
    assert answer.status == 200, answer
    assert [account["id"] for account in answer.json()["data"]] == ["acct_jane_usd"]

    # A programme-level POST with the MULTI_USER key: the signature covers the raw body.
    created = sandbox.signed("POST", "/v1/auth/users", {"externalId": "customer-42", "type": "PERSON", "name": "Ada Lovelace"}, key="multi")
    assert created.status == 201, created
    assert created.json()["enrollmentStatus"] == "INACTIVE"


def test_a_deposit_completes_on_the_session_clock_and_its_webhooks_verify(sandbox):
    webhooks = sandbox.listen()  # `service-sandbox listen` forwards the session's deliveries to this receiver
    assert sandbox.now() == START_CLOCK
    before = balance(sandbox, "acct_acme_usd")
    txn = simulate_deposit(sandbox)

    pending = sandbox.signed("GET", f"/v1/transactions/{txn}")
    assert pending.status == 200, pending
    assert pending.json()["status"] == "PENDING"
    assert balance(sandbox, "acct_acme_usd") == before
    sandbox.settle()  # every delivery due now has been answered by the receiver: no sleep, no polling
    created = webhooks.find(lambda d: d["transaction"]["id"] == txn and d["metadata"]["eventType"] == "transaction_created")
    assert created["transaction"]["status"] == "PENDING"

    # The clock is frozen: nothing completes until the test moves it. The call answers once due jobs ran.
    sandbox.advance(1000)
    done = sandbox.signed("GET", f"/v1/transactions/{txn}").json()
    assert done["status"] == "COMPLETED"
    assert done["creditAmount"] == "1250.00"
    assert balance(sandbox, "acct_acme_usd") == before + Decimal("1250.00")

    settled = sandbox.settle()
    assert settled["waiting"]["deliveries"] == 0, settled
    completed = webhooks.find(lambda d: d["transaction"]["id"] == txn and d["transaction"]["status"] == "COMPLETED")
    assert completed["metadata"]["eventType"] == "transaction_status_updated"
    assert completed["metadata"]["programId"] == "prg_sandbox"
    assert webhooks.rejected == []  # every delivery carried a valid signature


def test_sessions_are_isolated(sandbox, sandbox_factory):
    webhooks = sandbox.listen()
    other = sandbox_factory(webhook_url=True)  # the other way: the emulator posts to the receiver's URL itself
    assert other.base_url != sandbox.base_url
    before = balance(other, "acct_acme_usd")

    txn = simulate_deposit(sandbox)
    sandbox.advance(60_000)
    assert balance(sandbox, "acct_acme_usd") == before + Decimal("1250.00")

    # The other session has its own database, clock and webhooks: none of this reached it.
    assert balance(other, "acct_acme_usd") == before
    assert other.signed("GET", f"/v1/transactions/{txn}").status == 404
    assert other.now() == START_CLOCK
    assert sandbox.now() != START_CLOCK
    sandbox.settle()
    other.settle()
    webhooks.find(lambda d: d["transaction"]["id"] == txn and d["transaction"]["status"] == "COMPLETED")
    assert other.webhooks.deliveries == []

    # The other session's receiver, given as its webhookUrl, gets the other session's own webhooks.
    other_txn = simulate_deposit(other)
    other.settle()
    other.webhooks.find(lambda d: d["transaction"]["id"] == other_txn and d["metadata"]["eventType"] == "transaction_created")
    assert other.webhooks.rejected == []


def test_sessions_hand_out_ids_of_their_own_and_a_seed_replays_them(sandbox_factory):
    """docs/sessions.md#ids: a service under test that stores the emulator's ids never sees two sessions share one."""
    user = {"externalId": "customer-7", "type": "PERSON", "name": "Grace Hopper"}

    def ids_of(sandbox):
        created = sandbox.signed("POST", "/v1/auth/users", user, key="multi")
        assert created.status == 201, created
        return created.json()["userId"], simulate_deposit(sandbox), created.body

    # Four sessions at once, the same requests in each: four users and four transactions, no id twice.
    with ThreadPoolExecutor(4) as pool:
        sessions = list(pool.map(lambda _: sandbox_factory(), range(4)))
        answers = list(pool.map(ids_of, sessions))
    ids = [answer[0] for answer in answers] + [answer[1] for answer in answers]
    assert len(set(ids)) == len(ids), ids

    # Two sessions with one seed answer the same requests byte for byte: the same ids, to replay a failure.
    seed = f"{run_label()}-replay"
    first, second = ids_of(sandbox_factory(seed=seed)), ids_of(sandbox_factory(seed=seed))
    assert first == second
    assert first[0] not in ids


def test_a_bad_signature_is_401_with_the_error_body_and_changes_nothing(sandbox):
    webhooks = sandbox.listen()
    path = "/v1/sandbox/accounts/acct_acme_usd/deposits"
    listing = "/v1/transactions?accountId=acct_acme_usd&pageSize=1"
    newest = sandbox.signed("GET", listing).json()["data"][0]["id"]

    headers = sandbox.signature_headers("POST", path, DEPOSIT)
    signature = headers["X-Service-Signature"]
    headers["X-Service-Signature"] = ("0" if signature[0] != "0" else "1") + signature[1:]
    forged = sandbox.send("POST", path, DEPOSIT, headers)
    assert forged.status == 401, forged
    assert forged.json()["errorCode"] == "UNAUTHORIZED"
    assert forged.json()["message"]

    # Signed over one body, sent with another.
    tampered = sandbox.send("POST", path, dict(DEPOSIT, amount="9999.00"), sandbox.signature_headers("POST", path, DEPOSIT))
    assert tampered.status == 401, tampered

    # Signed over /v1/... without the session's prefix (/_sessions/ses_...): the target signed is the one sent.
    assert urlsplit(sandbox.base_url).path.startswith("/_sessions/")
    key = sandbox.credentials["single"]
    headers = sandbox.signature_headers("POST", path, DEPOSIT)
    ts = headers["X-Service-Timestamp"]
    headers["X-Service-Signature"] = sign(key["secret"], key["apiKey"], ts, "POST", path, json.dumps(DEPOSIT))
    assert sandbox.send("POST", path, DEPOSIT, headers).status == 401

    assert sandbox.signed("GET", listing).json()["data"][0]["id"] == newest  # no deposit was written
    sandbox.settle()
    assert webhooks.deliveries == []


def test_the_receiver_rejects_a_forged_delivery(sandbox_factory):
    sandbox = sandbox_factory(webhook_url=True)
    body = json.dumps({"transaction": {"id": "txn_forged", "status": "COMPLETED"}, "metadata": {"eventType": "transaction_status_updated"}}).encode()
    webhook = sandbox.credentials["webhook"]
    ts = str(int(time.time() * 1000))

    def deliver(secret):
        headers = {"Content-Type": "application/json", "X-Service-Api-Key": webhook["apiKey"], "X-Service-Timestamp": ts,
                   "X-Service-Signature": sign(secret, webhook["apiKey"], ts, "POST", "/webhooks", body)}
        return http_send(urllib.request.Request(sandbox.webhooks.url, data=body, method="POST", headers=headers)).status

    assert deliver("not-the-webhook-secret") == 401
    assert [r["reason"] for r in sandbox.webhooks.rejected] == ["signature mismatch"]
    assert sandbox.webhooks.deliveries == []
    assert deliver(webhook["secret"]) == 204
    assert sandbox.webhooks.deliveries[0]["transaction"]["id"] == "txn_forged"
