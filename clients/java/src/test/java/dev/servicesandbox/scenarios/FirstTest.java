package dev.servicesandbox.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.servicesandbox.SandboxClient;
import dev.servicesandbox.junit.SandboxExtension;
import dev.servicesandbox.model.Account;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

// The first test of docs/clients.md#java, as printed there.
@ExtendWith(SandboxExtension.class)   // dev.servicesandbox.junit: a labelled session per test, ended after it
class FirstTest {
  @Test void lists_accounts(SandboxClient api) {   // or (Session session): clock, settle, listen, faults, ...
    Account first = Account.from(api.get("/v1/accounts").ok().get("data", 0));
    assertEquals("acct_acme_usd", first.id());
  }
}
