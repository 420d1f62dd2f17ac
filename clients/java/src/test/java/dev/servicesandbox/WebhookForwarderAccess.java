package dev.servicesandbox;

import java.time.Duration;

/** The forwarder's test hook, for tests in other packages: wait for the emulator's n-th {@code ready}. */
public final class WebhookForwarderAccess {
  private WebhookForwarderAccess() {}

  public static boolean awaitConnections(WebhookForwarder forwarder, int count, Duration timeout) throws InterruptedException {
    return forwarder.awaitConnections(count, timeout);
  }
}
