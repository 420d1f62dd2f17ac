"""The scenarios every kit runs (docs/clients.md#python: the same in each language), each in a session
of its own, run with pytest -n 4 by test/kits/python.test.ts against one built server. No test sleeps for
webhooks: the session's clock moves and settle answers once every delivery due was answered."""

import uuid
from decimal import Decimal
from pathlib import Path

import pytest

from service_sandbox import START_CLOCK, check_model, models

CHECKOUT = Path(__file__).resolve().parents[3]
PACS008 = CHECKOUT / "test" / "fixtures" / "pacs008"
# A ready-made one-page PDF (docs/onboarding.md#walkthrough-with-curl-a-person-user).
PDF_BASE64 = "JVBERi0xLjQKMSAwIG9iago8PCAvVHlwZSAvQ2F0YWxvZyAvUGFnZXMgMiAwIFIgPj4KZW5kb2JqCjIgMCBvYmoKPDwgL1R5cGUgL1BhZ2VzIC9LaWRzIFszIDAgUl0gL0NvdW50IDEgPj4KZW5kb2JqCjMgMCBvYmoKPDwgL1R5cGUgL1BhZ2UgL1BhcmVudCAyIDAgUiAvTWVkaWFCb3ggWzAgMCA2MTIgNzkyXSAvQ29udGVudHMgNCAwIFIgL1Jlc291cmNlcyA8PCAvRm9udCA8PCAvRjEgNSAwIFIgPj4gPj4gPj4KZW5kb2JqCjQgMCBvYmoKPDwgL0xlbmd0aCA1MiA+PgpzdHJlYW0KQlQgL0YxIDE4IFRmIDcyIDcyMCBUZCAoU2FuZGJveCB0ZXN0IGRvY3VtZW50KSBUaiBFVAplbmRzdHJlYW0KZW5kb2JqCjUgMCBvYmoKPDwgL1R5cGUgL0ZvbnQgL1N1YnR5cGUgL1R5cGUxIC9CYXNlRm9udCAvSGVsdmV0aWNhID4+CmVuZG9iagp4cmVmCjAgNgowMDAwMDAwMDAwIDY1NTM1IGYgCjAwMDAwMDAwMDkgMDAwMDAgbiAKMDAwMDAwMDA1OCAwMDAwMCBuIAowMDAwMDAwMTE1IDAwMDAwIG4gCjAwMDAwMDAyNDEgMDAwMDAgbiAKMDAwMDAwMDM0MyAwMDAwMCBuIAp0cmFpbGVyCjw8IC9TaXplIDYgL1Jvb3QgMSAwIFIgPj4Kc3RhcnR4cmVmCjQxMwolJUVPRgo="
DEPOSIT = {"depositInstructionId": "di_acme_usd_ach", "amount": "1250.00", "reference": "INV-2026-0311", "counterpartyName": "Northwind Traders"}


def balance(session, account_id="acct_acme_usd"):
    answer = session.get(f"/v1/accounts/{account_id}")
    assert answer.status == 200, answer
    return Decimal(check_model(answer.json(), models.AccountDetail)["balances"]["current"])


def deposit(session, body=DEPOSIT):
    """A simulated deposit (docs/money-in.md#simulated-deposits): the new transaction's id, from the 202's
    Location {session prefix}/v1/transactions/{id}."""
    answer = session.post("/v1/sandbox/accounts/acct_acme_usd/deposits", body)
    assert answer.status == 202, answer
    return answer.headers["Location"].rsplit("/", 1)[-1]


def transaction(session, txn):
    answer = session.get(f"/v1/transactions/{txn}")
    assert answer.status == 200, answer
    return check_model(answer.json(), models.Transaction)


def statuses(receiver, txn):
    return [(event["metadata"]["eventType"], event["transaction"]["status"]) for event in receiver.for_transaction(txn)]


def test_a_business_is_onboarded_to_active_and_receives_its_accounts(sandbox):
    user = {"externalId": f"northwind-{uuid.uuid4().hex[:8]}", "type": "BUSINESS", "name": "Northwind Traders Inc"}
    created = sandbox.post("/v1/auth/users", user, key="multi")
    assert created.status == 201, created
    user_id = check_model(created.json(), models.User)["userId"]
    assert created.json()["enrollmentStatus"] == "INACTIVE"

    enrollment = sandbox.get("/v1/enrollment", user=user_id)
    assert enrollment.status == 200, enrollment
    request_id = check_model(enrollment.json(), models.Enrollment)["informationRequest"]["id"]
    entries = {"entries": [
        {"key": "businessName", "value": "Northwind Traders Inc"},
        {"key": "registrationNumber", "value": "C-4581234"},
        {"key": "incorporationCountry", "value": "US"},
        {"key": "address", "value": {"line1": "1 Harbor Road", "city": "Wilmington", "region": "DE", "postalCode": "19801", "country": "US"}},
        {"key": "beneficialOwners", "value": [{"name": "Ada Founder", "dateOfBirth": "1985-02-03", "ownershipPercent": 60}, {"name": "Ben Partner", "dateOfBirth": "1979-11-30", "ownershipPercent": 40}]},
        {"key": "formationDocument", "value": {"fileName": "certificate.pdf", "contentType": "application/pdf", "contentBase64": PDF_BASE64}},
    ]}
    written = sandbox.post(f"/v1/information-requests/{request_id}/entries", entries, user=user_id)
    assert written.status == 200, written
    assert written.json()["validationStatus"] == "VALID", written
    submitted = sandbox.post(f"/v1/information-requests/{request_id}/submit", user=user_id)
    assert submitted.status == 200, submitted

    assert sandbox.get("/v1/accounts", user=user_id).json()["data"] == []  # nothing before the review
    sandbox.advance(5000)  # the review (fixtures timeline.reviewMs) approves it
    active = sandbox.get("/v1/enrollment", user=user_id).json()
    assert active["status"] == "ACTIVE", active

    accounts = sandbox.get("/v1/accounts", user=user_id).json()["data"]
    assert sorted(account["currency"] for account in accounts) == ["USD", "USDC"]
    sandbox.advance(2000)  # the deposit-instruction provider is ready (timeline.providerReadyMs)
    usd = next(account for account in accounts if account["currency"] == "USD")
    detail = sandbox.get(f"/v1/accounts/{usd['id']}", user=user_id).json()
    instructions = [check_model(item, models.DepositInstruction) for item in detail["depositInstructions"]]
    assert len(instructions) == 2 and all(item["status"] == "ACTIVE" for item in instructions), instructions


def test_a_deposit_completes_and_settle_delivers_its_verified_webhooks(sandbox, webhook_receiver):
    assert sandbox.now() == START_CLOCK
    before = balance(sandbox)
    txn = deposit(sandbox)
    assert transaction(sandbox, txn)["status"] == "PENDING"
    sandbox.advance(1000)  # the frozen clock moves; the deposit completes before this answers
    assert transaction(sandbox, txn)["status"] == "COMPLETED"
    assert balance(sandbox) == before + Decimal("1250.00")

    report = sandbox.settle()
    assert report["waiting"]["deliveries"] == 0, report
    assert statuses(webhook_receiver, txn) == [("transaction_created", "PENDING"), ("transaction_status_updated", "COMPLETED")]
    for event in webhook_receiver.events:
        check_model(event["metadata"], models.WebhookMetadata)
    assert webhook_receiver.rejected == []
    assert webhook_receiver.duplicates == []


@pytest.mark.parametrize("fmt", ["json", "pacs008"])
def test_a_payout_completes_with_verified_webhooks(sandbox, webhook_receiver, fmt):
    if fmt == "json":
        payload = {"entityId": "acct_acme_usd", "beneficiaryId": "ben_globex", "amount": "250.00", "currency": "USD", "reference": "INV-1001"}
        amount = "250.00"
    else:
        # 25,000.00 USD by Fedwire: fund the account first.
        sandbox.post("/v1/sandbox/accounts/acct_acme_usd/deposits", dict(DEPOSIT, amount="30000.00"))
        sandbox.advance(1000)
        payload = (PACS008 / "fedwire.xml").read_bytes()
        amount = "25000.00"
    key = f"kit-python-{fmt}-{uuid.uuid4().hex[:8]}"
    answer = sandbox.payout(fmt, payload, key)
    assert answer.status == 202, answer
    accepted = check_model(answer.json(), models.PayoutSubmissionResponse)
    assert accepted["status"] == "RECEIVED"
    txn = accepted["transactionId"]
    again = sandbox.payout(fmt, payload, key)  # the same key and body replay the 202 byte for byte
    assert (again.status, again.body) == (202, answer.body)

    sandbox.advance(4000)  # 1 s to PROCESSING, 3 s more to COMPLETED (docs/payouts.md)
    done = transaction(sandbox, txn)
    assert (done["type"], done["status"], done["creditAmount"]) == ("WITHDRAWAL", "COMPLETED", amount)
    sandbox.settle()
    assert statuses(webhook_receiver, txn) == [
        ("transaction_created", "PENDING"),
        ("transaction_status_updated", "PROCESSING"),
        ("transaction_status_updated", "COMPLETED"),
    ]
    assert webhook_receiver.rejected == []


def test_an_ambiguous_commit_retried_with_the_same_key_is_one_transaction(sandbox):
    listing = "/v1/transactions?accountId=acct_acme_usd&pageSize=100"
    before = {t["id"] for t in sandbox.get(listing).json()["data"]}
    key = f"kit-ambiguous-{uuid.uuid4().hex[:8]}"
    intent = sandbox.post("/v1/transaction-intents", {
        "idempotencyKey": key, "debitAccountId": "acct_acme_usd", "creditAmount": "100.00",
        "credit": {"instrumentType": "BANK_ACCOUNT", "beneficiaryId": "ben_globex", "instrumentId": "bi_globex_usd"},
    })
    assert intent.status == 201, intent
    intent_id = check_model(intent.json(), models.TransactionIntent)["id"]

    rule = sandbox.add_fault({"type": "ambiguous", "status": 502}, match={"method": "POST", "path": "/v1/transaction-intents/*/commit"}, times=1)
    lost = sandbox.post(f"/v1/transaction-intents/{intent_id}/commit", {"idempotencyKey": key})
    assert lost.status == 502, lost  # committed, but the client cannot know
    check_model(lost.json(), models.ServiceError)
    retried = sandbox.post(f"/v1/transaction-intents/{intent_id}/commit", {"idempotencyKey": key})
    assert retried.status == 200, retried
    committed = retried.json()
    assert committed["status"] == "COMMITTED"

    after = {t["id"] for t in sandbox.get(listing).json()["data"]}
    assert after - before == {committed["relatedTransactionId"]}  # one transaction, however often retried
    assert sandbox.fault(rule["id"])["fired"] == 1
    journal = sandbox.requests(pathPrefix=f"/v1/transaction-intents/{intent_id}/commit")
    assert sorted(entry["status"] for entry in journal) == [200, 502]


def test_duplicate_and_badly_signed_webhooks_under_chaos_leave_exactly_the_right_events(sandbox, webhook_receiver):
    chaos = sandbox.set_chaos(seed="kit-python", duplicate={"times": 2}, badSignature={"times": 1})
    assert chaos["duplicate"]["remaining"] == 2
    txn = deposit(sandbox)
    sandbox.advance(1000)
    # The badly signed attempt was refused (401) and is retried 5 s of emulated time later: settle, move the
    # clock to the retry, settle again, until nothing waits.
    report = sandbox.settle_until_idle()
    assert report["waiting"]["deliveries"] == 0, report

    assert [r["reason"] for r in webhook_receiver.rejected] == ["SIGNATURE_MISMATCH"]
    assert statuses(webhook_receiver, txn) == [("transaction_created", "PENDING"), ("transaction_status_updated", "COMPLETED")]
    assert len(webhook_receiver.duplicates) == 2
    event_ids = [event["metadata"]["eventId"] for event in webhook_receiver.events]
    assert len(event_ids) == len(set(event_ids))
    assert {d["metadata"]["eventId"] for d in webhook_receiver.duplicates} <= set(event_ids)
    log = sandbox.deliveries(transactionId=txn)
    assert sorted(d["eventId"] for d in log) == sorted(event_ids)  # every event the emulator sent, each once
    assert all(d["status"] == "DELIVERED" for d in log)
    kinds = sorted(attempt["kind"] for d in log for attempt in d["attempts"])
    assert kinds.count("DUPLICATE") == 2
    seen = sandbox.chaos()
    assert (seen["duplicate"]["fired"], seen["badSignature"]["fired"]) == (2, 1)


def test_a_session_starts_from_a_snapshot(sandbox, sandbox_factory, sandbox_server):
    txn = deposit(sandbox)
    sandbox.advance(1000)
    funded = balance(sandbox)
    sandbox.snapshot("funded")
    # A session's snapshots are its own: export it and upload it as a root snapshot sessions can start from.
    name = f"kit-python-{uuid.uuid4().hex[:12]}"
    sandbox_server.upload_snapshot(name, sandbox.export_snapshot("funded"))
    try:
        copy = sandbox_factory(snapshot=name)
        copy2 = sandbox_factory(snapshot=name)
    finally:
        sandbox_server.delete_snapshot(name)
    assert copy.now() == sandbox.now() == "2026-03-01T12:00:01.000Z"
    assert balance(copy) == funded
    assert transaction(copy, txn)["status"] == "COMPLETED"

    deposit(copy)
    copy.advance(1000)
    assert balance(copy) == funded + Decimal("1250.00")
    assert balance(sandbox) == funded  # the sessions share nothing
    assert balance(copy2) == funded


def test_a_receiver_given_as_the_webhook_url(sandbox_factory):
    session = sandbox_factory(webhook_url=True)  # the emulator posts to the receiver itself
    txn = deposit(session)
    session.advance(1000)
    session.settle()
    assert statuses(session.webhooks, txn) == [("transaction_created", "PENDING"), ("transaction_status_updated", "COMPLETED")]
