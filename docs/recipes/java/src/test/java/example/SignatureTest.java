package example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.servicesandbox.Session;
import dev.servicesandbox.Signer;
import dev.servicesandbox.junit.SandboxExtension;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(SandboxExtension.class)
class SignatureTest {
  @Test
  void a_bad_signature_is_refused_with_the_error_body(Session session) {
    var refused = session.client().send("GET", "/v1/accounts", null, Map.of(
        Signer.API_KEY, session.credentials().single().apiKey(),
        Signer.TIMESTAMP, Long.toString(System.currentTimeMillis()),
        Signer.PROGRAM_ID, session.credentials().programmeId(),
        Signer.SIGNATURE, "0".repeat(64)));
    assertEquals(401, refused.status());
    assertEquals("UNAUTHORIZED", refused.error().errorCode());
  }
}
