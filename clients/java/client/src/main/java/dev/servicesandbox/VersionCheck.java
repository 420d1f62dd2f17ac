package dev.servicesandbox;

import java.net.URI;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The kit's version against the server's (docs/clients.md#java-version-and-defaults): the first time the kit talks to a server URL
 * it reads {@code GET /_emulator/health}'s {@code version}, and when it is not {@link Sandbox#VERSION} logs one
 * WARNING on the {@code dev.servicesandbox} System.Logger, once per server URL for the whole process.
 */
final class VersionCheck {
  private static final System.Logger LOG = System.getLogger("dev.servicesandbox");
  /** The server URLs already checked: one check, and at most one warning, per URL and process. */
  private static final Set<String> CHECKED = ConcurrentHashMap.newKeySet();

  private VersionCheck() {}

  /**
   * Checks the server at {@code url} unless done already.
   *
   * @param url the server's URL
   * @param timeout how long to wait for its health answer
   * @return the server's version, or null when known already or not readable
   */
  static String check(String url, java.time.Duration timeout) {
    if (!CHECKED.add(url)) return null;
    String version;
    try {
      Response health = Http.send("GET", URI.create(url + "/_emulator/health"), null, Map.of(), timeout);
      if (health.status() != 200) return null;
      version = health.string("version");
    } catch (SandboxException | ClassCastException e) {
      return null; // not reachable, or not the emulator: the call itself will say so
    }
    if (version != null && !version.equals(Sandbox.VERSION)) {
      LOG.log(System.Logger.Level.WARNING, "service-sandbox at {0} is version {1}, this Java kit is {2}: "
          + "use the same version for both (docs/clients.md#java-version-and-defaults)", url, version, Sandbox.VERSION);
    }
    return version;
  }
}
