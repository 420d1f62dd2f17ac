package example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.math.BigDecimal;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import sandbox.Sandbox;
import sandbox.SandboxExtension;

@ExtendWith(SandboxExtension.class)
class AccountsTest {
  @Test
  void lists_the_users_accounts(Sandbox sandbox) {
    // The query is part of the signed request target (docs/authentication.md).
    Sandbox.Response res = sandbox.signed("GET", "/v1/accounts?pageSize=2", null);

    assertEquals(200, res.status(), res.body());
    assertEquals(new BigDecimal(4), res.get("totalRecords"));
    assertEquals(2, ((List<?>) res.get("data")).size());
    assertEquals("acct_acme_usd", res.get("data", 0, "id"));
    assertEquals("acct_acme_eur", res.get("data", 1, "id"));
  }

  @Test
  void reads_one_account_with_its_fixture_balance(Sandbox sandbox) {
    Sandbox.Response res = sandbox.signed("GET", "/v1/accounts/acct_acme_usd", null);

    assertEquals(200, res.status(), res.body());
    assertEquals("USD", res.get("currency"));
    // A new session starts from the fixtures, whatever other tests did in theirs.
    assertEquals("88062.80", res.get("balances", "current"));
    assertEquals("di_acme_usd_ach", res.get("depositInstructions", 0, "id"));
  }
}
