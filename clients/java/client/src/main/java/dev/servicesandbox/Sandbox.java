package dev.servicesandbox;

import java.time.Duration;

/** The kit's identity and defaults (docs/clients.md#java). */
public final class Sandbox {
  /** The kit's version: the server's version it is made for (each kit and the server share one version). */
  public static final String VERSION = "0.2.0";

  /**
   * How long one call waits for its answer unless told otherwise ({@link Emulator#withTimeout},
   * {@link SandboxClient#withTimeout}): 60 s, as the Go kit's {@code DefaultTimeout}. A settle waits its own time on
   * top (docs/clients.md#java-version-and-defaults).
   */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

  private Sandbox() {}
}
