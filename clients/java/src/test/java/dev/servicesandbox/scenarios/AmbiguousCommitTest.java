package dev.servicesandbox.scenarios;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.servicesandbox.Fault;
import dev.servicesandbox.Response;
import dev.servicesandbox.SandboxClient;
import dev.servicesandbox.Session;
import dev.servicesandbox.junit.SandboxExtension;
import dev.servicesandbox.model.Transaction;
import dev.servicesandbox.model.TransactionIntent;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** docs/faults.md#1-the-ambiguous-commit-retry-with-the-same-key-get-one-transaction. */
@ExtendWith(SandboxExtension.class)
class AmbiguousCommitTest {
  static List<Transaction> withdrawals(SandboxClient api) {
    List<?> data = (List<?>) api.get("/v1/transactions?accountId=acct_acme_usd&pageSize=100").ok().get("data");
    return data.stream().map(Transaction::from).filter(t -> "WITHDRAWAL".equals(t.type()) && t.createdAt().startsWith("2026-03-01T12:00")).toList();
  }

  @Test
  void a_commit_whose_answer_is_lost_and_retried_with_its_key_makes_one_transaction(Session session) {
    SandboxClient api = session.client();
    Map<String, Object> intent = Map.of("idempotencyKey", "invoice-2026-17", "debitAccountId", "acct_acme_usd",
        "credit", Map.of("instrumentType", "BANK_ACCOUNT", "beneficiaryId", "ben_globex", "instrumentId", "bi_globex_usd"),
        "creditAmount", "100.00");
    TransactionIntent created = api.post("/v1/transaction-intents", intent).ok().as(TransactionIntent::from);
    assertEquals("CREATED", created.status());

    // The server commits, then the answer is lost: a 502 instead of the 200 (docs/faults.md#fault-rules).
    String rule = session.addFault(Fault.on("POST", "/v1/transaction-intents/*/commit").ambiguous(502).times(1)).string("id");
    String commit = "/v1/transaction-intents/" + created.id() + "/commit";
    Response lost = api.post(commit, Map.of("idempotencyKey", "invoice-2026-17"));
    assertEquals(502, lost.status(), lost.body());

    Response retried = api.post(commit, Map.of("idempotencyKey", "invoice-2026-17"));
    assertEquals(200, retried.status(), retried.body());
    TransactionIntent committed = retried.as(TransactionIntent::from);
    assertEquals("COMMITTED", committed.status());
    List<Transaction> made = withdrawals(api);
    assertEquals(List.of(committed.relatedTransactionId()), made.stream().map(Transaction::id).toList(), "one transaction");
    assertEquals(1L, ((Number) session.control("GET", "/faults/" + rule, null).ok().get("fired")).longValue());
  }

  @Test
  void a_payout_whose_answer_is_lost_replays_its_202_on_the_retry(Session session) {
    SandboxClient api = session.client();
    session.addFault(Fault.on("POST", "/v1/payout-origination/json").ambiguous(503).times(1));
    Map<String, String> payload = Map.of("entityId", "acct_acme_usd", "beneficiaryId", "ben_globex", "amount", "75.00",
        "currency", "USD", "reference", "INV-2002");
    assertEquals(503, api.payoutJson(payload, "acme-json-lost-1").status());
    Response retried = api.payoutJson(payload, "acme-json-lost-1");
    assertEquals(202, retried.status(), retried.body());
    assertArrayEquals(retried.bytes(), api.payoutJson(payload, "acme-json-lost-1").bytes());
    assertEquals(List.of(retried.string("transactionId")), withdrawals(api).stream().map(Transaction::id).toList(), "one transaction");
  }
}
