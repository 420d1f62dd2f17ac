package example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.servicesandbox.SandboxClient;
import dev.servicesandbox.junit.SandboxExtension;
import dev.servicesandbox.model.Account;
import dev.servicesandbox.model.AccountDetail;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(SandboxExtension.class)
class AccountsTest {
  @Test
  void lists_the_users_accounts(SandboxClient api) { // the session's SINGLE_USER client (usr_acme)
    var page = api.get("/v1/accounts?pageSize=2").ok(); // the query is signed as sent
    List<Account> accounts = ((List<?>) page.get("data")).stream().map(Account::from).toList();
    assertEquals(List.of("acct_acme_usd", "acct_acme_eur"), accounts.stream().map(Account::id).toList());
    assertEquals(4L, ((Number) page.get("totalRecords")).longValue());
  }

  @Test
  void reads_one_account_with_its_fixture_balance(SandboxClient api) {
    AccountDetail usd = api.get("/v1/accounts/acct_acme_usd").ok().as(AccountDetail::from);
    // A new session starts from the fixtures, whatever other tests did in theirs.
    assertEquals("88062.80", usd.balances().current());
    assertEquals("di_acme_usd_ach", usd.depositInstructions().get(0).id());
  }
}
