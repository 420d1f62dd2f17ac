package sandbox;

import java.lang.reflect.Method;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5 extension: a fresh emulator session for every test, deleted after it.
 *
 * <pre>{@code
 * @ExtendWith(SandboxExtension.class)
 * class PaymentsTest {
 *   @Test void lists_accounts(Sandbox sandbox) {
 *     assertEquals(200, sandbox.signed("GET", "/v1/accounts", null).status());
 *   }
 * }
 * }</pre>
 *
 * Sessions are isolated from each other, so tests may run in parallel against one emulator process
 * (junit-platform.properties). The emulator is the one at {@code SANDBOX_URL}, default
 * {@code http://127.0.0.1:4010}, or one {@link Sandbox#serverUrl()} starts with the built CLI.
 */
public final class SandboxExtension implements AfterEachCallback, ParameterResolver {
  private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(SandboxExtension.class);
  private static final String KEY = "sandbox";

  @Override
  public void afterEach(ExtensionContext context) {
    Sandbox sandbox = context.getStore(NS).remove(KEY, Sandbox.class);
    if (sandbox != null) sandbox.close();
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    // Test methods and @BeforeEach/@AfterEach only: a constructor or @BeforeAll runs outside any one test.
    return parameter.getParameter().getType() == Sandbox.class
        && parameter.getDeclaringExecutable() instanceof Method
        && context.getTestMethod().isPresent();
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    // Opened on first use (a test's @BeforeEach or the test itself; one per test), so a test that takes no
    // Sandbox creates no session.
    return context.getStore(NS).getOrComputeIfAbsent(KEY, key -> Sandbox.open(), Sandbox.class);
  }
}
