package dev.servicesandbox;

import dev.servicesandbox.model.FaultEffectAmbiguous;
import dev.servicesandbox.model.FaultEffectStatus;
import dev.servicesandbox.model.FaultMatch;
import java.math.BigDecimal;

/**
 * The body of {@code POST /_emulator/faults} (docs/faults.md#fault-rules), typed: which requests it matches, what
 * it does to them, how many times. Immutable; each method gives a changed copy.
 *
 * <pre>{@code
 * session.addFault(Fault.on("POST", "/v1/transaction-intents/* /commit").ambiguous(502).times(1));
 * }</pre>
 *
 * @param match which requests it applies to
 * @param effect what it does: a {@code FaultEffect...} record of {@code dev.servicesandbox.model} (or a Map)
 * @param times how many matching requests it fires on; null: every one
 * @param probability the chance it fires on a matching request (0 to 1); null: always
 * @param seed the seed of that chance, for a reproducible run; null: the server's
 */
public record Fault(FaultMatch match, Object effect, Long times, BigDecimal probability, String seed) {
  /**
   * A rule on requests with this method and path pattern ({@code *} matches one segment).
   *
   * @param method the HTTP method, e.g. {@code POST}
   * @param path the path pattern, e.g. {@code /v1/transaction-intents/* /commit} (without the space)
   * @return a rule with no effect yet
   */
  public static Fault on(String method, String path) {
    return new Fault(new FaultMatch(method, path, null, null, null), null, null, null, null);
  }

  /**
   * The request is carried out, then answered with {@code status} as if it failed: the ambiguous commit.
   *
   * @param status the status answered, e.g. 502
   * @return the changed rule
   */
  public Fault ambiguous(int status) {
    return effect(new FaultEffectAmbiguous("ambiguous", BigDecimal.valueOf(status)));
  }

  /**
   * The request is answered with {@code status} without being carried out.
   *
   * @param status the status answered, e.g. 503
   * @return the changed rule
   */
  public Fault status(int status) {
    return effect(new FaultEffectStatus("status", BigDecimal.valueOf(status), null, null));
  }

  /**
   * Another effect (a {@code FaultEffect...} record, or a Map of the effect's JSON).
   *
   * @param value the effect
   * @return the changed rule
   */
  public Fault effect(Object value) {
    return new Fault(match, value, times, probability, seed);
  }

  /**
   * Fires on this many matching requests, then stops.
   *
   * @param value the count
   * @return the changed rule
   */
  public Fault times(long value) {
    return new Fault(match, effect, value, probability, seed);
  }

  /**
   * Fires on a matching request with this chance, drawn from {@code seed}.
   *
   * @param chance 0 to 1
   * @param seedValue the seed, for a reproducible run
   * @return the changed rule
   */
  public Fault probability(double chance, String seedValue) {
    return new Fault(match, effect, times, BigDecimal.valueOf(chance), seedValue);
  }
}
