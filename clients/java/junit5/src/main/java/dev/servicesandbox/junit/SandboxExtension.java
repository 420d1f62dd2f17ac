package dev.servicesandbox.junit;

import dev.servicesandbox.Emulator;
import dev.servicesandbox.SandboxClient;
import dev.servicesandbox.Session;
import java.lang.reflect.Method;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5 extension (docs/clients.md#java): each test that takes a {@link Session} (or a {@link SandboxClient},
 * the session's SINGLE_USER client) gets a fresh labelled session, ended after the test, pass or fail, with any
 * webhook forwarding it started ({@link Session#forwardWebhooks}). The server is {@link Emulator#shared()}: the one
 * at {@code SANDBOX_URL}, or one started with the CLI, once per JVM. At the end of the run the sessions this JVM
 * created and left open are ended ({@link Emulator#endRemaining()}: never another run's, even with the same label)
 * and a server started here is stopped. Sessions are isolated, so tests may run in parallel ({@code junit.jupiter.execution.parallel.enabled=true}).
 * A test that takes an {@link Emulator} gets the server, to open more sessions by hand (try-with-resources).
 *
 * <pre>{@code
 * @ExtendWith(SandboxExtension.class)
 * class PaymentsTest {
 *   @Test void lists_accounts(SandboxClient api) {
 *     assertEquals(200, api.get("/v1/accounts").status());
 *   }
 * }
 * }</pre>
 */
public final class SandboxExtension implements AfterEachCallback, ParameterResolver {
  private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(SandboxExtension.class);
  private static final String KEY = "session";

  /** Made by JUnit through {@code @ExtendWith}. */
  public SandboxExtension() {}

  /**
   * The run's server, in the root store: closed by JUnit when the whole run ends (it ends the sessions the run left open and stops a
   * server started here). JUnit 5.9 to 5.12 close a store value that is a {@code CloseableResource}; 5.13 deprecates
   * that interface and closes values that are {@link AutoCloseable} instead (docs/decisions.md#java-junit-store).
   * Being both, it is closed on every version from 5.9, once ({@code close()} is idempotent).
   */
  @SuppressWarnings("deprecation") // CloseableResource: the only interface JUnit 5.9 to 5.12 close; see above
  private static final class Run implements ExtensionContext.Store.CloseableResource, AutoCloseable {
    final Emulator emulator = Emulator.shared();
    private boolean closed;

    @Override
    public synchronized void close() {
      if (closed) return;
      closed = true;
      try {
        emulator.endRemaining();
      } finally {
        emulator.close();
      }
    }
  }

  private static Emulator emulator(ExtensionContext context) {
    return context.getRoot().getStore(NS).getOrComputeIfAbsent(Run.class, key -> new Run(), Run.class).emulator;
  }

  @Override
  public void afterEach(ExtensionContext context) {
    Session session = context.getStore(NS).remove(KEY, Session.class);
    if (session != null) session.close();
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    Class<?> type = parameter.getParameter().getType();
    // Test methods and @BeforeEach/@AfterEach only: a constructor or @BeforeAll runs outside any one test.
    boolean perTest = parameter.getDeclaringExecutable() instanceof Method && context.getTestMethod().isPresent();
    return (type == Session.class || type == SandboxClient.class) && perTest || type == Emulator.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    Emulator emulator = emulator(context);
    Class<?> type = parameter.getParameter().getType();
    if (type == Emulator.class) return emulator;
    // Opened on first use, one per test, so a test that takes none creates none.
    Session session = context.getStore(NS).getOrComputeIfAbsent(KEY, key -> emulator.createSession(), Session.class);
    return type == SandboxClient.class ? session.client() : session;
  }
}
