"""Tests against service-sandbox on the Python kit, one fresh session each (guide: docs/recipes.md#python).

Run: pytest -n 4 docs/recipes/python
"""

import json
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from urllib.parse import urlsplit

from service_sandbox import START_CLOCK, http_send, sign

ACME_ACCOUNTS = {"acct_acme_usd", "acct_acme_eur", "acct_acme_usdc", "acct_acme_gbp"}
DEPOSIT = {"depositInstructionId": "di_acme_usd_ach", "amount": "1250.00", "reference": "INV-2026-0311", "counterpartyName": "Northwind Traders"}


def balance(sandbox, account_id):
    answer = sandbox.get(f"/v1/accounts/{account_id}")
    assert answer.status == 200, answer
    return Decimal(answer.json()["balances"]["current"])


def simulate_deposit(sandbox, body=DEPOSIT):
    """The new transaction's id, from the 202's Location (docs/money-in.md#simulated-deposits)."""
    answer = sandbox.post("/v1/sandbox/accounts/acct_acme_usd/deposits", body)
    assert answer.status == 202, answer
    return answer.headers["Location"].rsplit("/", 1)[-1]


def test_lists_the_fixture_accounts(sandbox):
    answer = sandbox.get("/v1/accounts")
    assert answer.status == 200, answer
    assert {account["id"] for account in answer.json()["data"]} == ACME_ACCOUNTS
    page = sandbox.get("/v1/accounts?pageSize=2")  # the query is part of the signed target
    assert [account["id"] for account in page.json()["data"]] == ["acct_acme_usd", "acct_acme_eur"]


def test_a_multi_user_key_acts_for_the_user_it_names(sandbox):
    answer = sandbox.get("/v1/accounts", user="usr_jane")
    assert [account["id"] for account in answer.json()["data"]] == ["acct_jane_usd"]
    created = sandbox.post("/v1/auth/users", {"externalId": "customer-42", "type": "PERSON", "name": "Ada Lovelace"}, key="multi")
    assert created.status == 201, created
    assert created.json()["enrollmentStatus"] == "INACTIVE"


def test_a_deposit_completes_on_the_session_clock_and_its_webhooks_verify(sandbox, webhook_receiver):
    assert sandbox.now() == START_CLOCK
    before = balance(sandbox, "acct_acme_usd")
    txn = simulate_deposit(sandbox)
    assert sandbox.get(f"/v1/transactions/{txn}").json()["status"] == "PENDING"
    sandbox.advance(1000)  # the frozen clock moves; the deposit completes before this answers
    assert sandbox.get(f"/v1/transactions/{txn}").json()["status"] == "COMPLETED"
    assert balance(sandbox, "acct_acme_usd") == before + Decimal("1250.00")
    sandbox.settle()  # every delivery due has been answered by the receiver: no sleep, no polling
    completed = webhook_receiver.find(lambda e: e["transaction"]["id"] == txn and e["transaction"]["status"] == "COMPLETED")
    assert completed["metadata"]["eventType"] == "transaction_status_updated"
    assert webhook_receiver.rejected == []


def test_sessions_are_isolated(sandbox, sandbox_factory):
    webhooks = sandbox.listen()
    other = sandbox_factory(webhook_url=True)  # the emulator posts to this one's receiver itself
    before = balance(other, "acct_acme_usd")
    txn = simulate_deposit(sandbox)
    sandbox.advance(60_000)
    assert balance(sandbox, "acct_acme_usd") == before + Decimal("1250.00")
    assert balance(other, "acct_acme_usd") == before
    assert other.get(f"/v1/transactions/{txn}").status == 404
    assert other.now() == START_CLOCK
    sandbox.settle()
    other.settle()
    webhooks.find(lambda e: e["transaction"]["id"] == txn and e["transaction"]["status"] == "COMPLETED")
    assert other.webhooks.events == []
    other_txn = simulate_deposit(other)
    other.settle()
    other.webhooks.find(lambda e: e["transaction"]["id"] == other_txn)


def test_sessions_hand_out_ids_of_their_own_and_a_seed_replays_them(sandbox_factory, sandbox_label):
    """docs/sessions.md#ids: four sessions at once share no id; two with one seed answer alike."""
    user = {"externalId": "customer-7", "type": "PERSON", "name": "Grace Hopper"}

    def ids_of(session):
        created = session.post("/v1/auth/users", user, key="multi")
        assert created.status == 201, created
        return created.json()["userId"], simulate_deposit(session), created.body

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(ids_of, list(pool.map(lambda _: sandbox_factory(), range(4)))))
    ids = [answer[0] for answer in answers] + [answer[1] for answer in answers]
    assert len(set(ids)) == len(ids), ids
    seed = f"{sandbox_label}-replay"
    first, second = ids_of(sandbox_factory(seed=seed)), ids_of(sandbox_factory(seed=seed))
    assert first == second and first[0] not in ids


def test_a_bad_signature_is_401_with_the_error_body_and_changes_nothing(sandbox, webhook_receiver):
    path = "/v1/sandbox/accounts/acct_acme_usd/deposits"
    listing = "/v1/transactions?accountId=acct_acme_usd&pageSize=1"
    newest = sandbox.get(listing).json()["data"][0]["id"]
    headers = sandbox.signature_headers("POST", path, DEPOSIT)
    headers["X-Service-Signature"] = ("0" if headers["X-Service-Signature"][0] != "0" else "1") + headers["X-Service-Signature"][1:]
    forged = sandbox.send("POST", path, DEPOSIT, headers)
    assert forged.status == 401, forged
    assert forged.json()["errorCode"] == "UNAUTHORIZED" and forged.json()["message"]
    tampered = sandbox.send("POST", path, dict(DEPOSIT, amount="9999.00"), sandbox.signature_headers("POST", path, DEPOSIT))
    assert tampered.status == 401, tampered
    # Signed over /v1/... without the session's prefix (/_sessions/ses_...): the target signed is the one sent.
    assert urlsplit(sandbox.base_url).path.startswith("/_sessions/")
    key, headers = sandbox.credentials["single"], sandbox.signature_headers("POST", path, DEPOSIT)
    headers["X-Service-Signature"] = sign(key["secret"], key["apiKey"], headers["X-Service-Timestamp"], "POST", path, json.dumps(DEPOSIT))
    assert sandbox.send("POST", path, DEPOSIT, headers).status == 401
    assert sandbox.get(listing).json()["data"][0]["id"] == newest  # no deposit was written
    sandbox.settle()
    assert webhook_receiver.events == []


def test_the_receiver_rejects_a_forged_delivery(sandbox_factory):
    sandbox = sandbox_factory(webhook_url=True)
    body = json.dumps({"transaction": {"id": "txn_forged", "status": "COMPLETED"}, "metadata": {"eventId": "evt_forged", "eventType": "transaction_status_updated"}}).encode()
    webhook, ts = sandbox.credentials["webhook"], str(int(time.time() * 1000))

    def deliver(secret):
        headers = {"Content-Type": "application/json", "X-Service-Api-Key": webhook["apiKey"], "X-Service-Timestamp": ts,
                   "X-Service-Signature": sign(secret, webhook["apiKey"], ts, "POST", "/webhooks", body)}
        return http_send(urllib.request.Request(sandbox.webhooks.url, data=body, method="POST", headers=headers)).status

    assert deliver("not-the-webhook-secret") == 401
    assert [r["reason"] for r in sandbox.webhooks.rejected] == ["SIGNATURE_MISMATCH"]
    assert deliver(webhook["secret"]) == 200 and deliver(webhook["secret"]) == 200  # the second is a duplicate
    assert [e["transaction"]["id"] for e in sandbox.webhooks.events] == ["txn_forged"]
    assert len(sandbox.webhooks.duplicates) == 1
