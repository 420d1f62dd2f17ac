package dev.servicesandbox;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a new session starts from (docs/sessions.md#what-a-session-starts-from): by default the server's fixtures,
 * a clock frozen at {@link #START_CLOCK} and the run's label ({@link Emulator#runLabel()}). Immutable; each
 * method gives a changed copy.
 *
 * @param label the session's label (docs/sessions.md#labels): {@code DELETE /_emulator/sessions?label=} ends all of them
 * @param seed ids replay: two sessions with one seed answer the same requests with the same ids (docs/sessions.md#ids)
 * @param snapshot the name of a snapshot of the root sandbox to start from (then no clock: the snapshot's)
 * @param clock an ISO instant to start frozen at, or {@code realtime}
 * @param webhookUrl the session's webhook endpoint (an emulator that can reach the tests); null: none, use listen
 * @param fixtures a fixtures document of the session's own (Map, or JSON text); null: the server's
 */
public record SessionOptions(String label, String seed, String snapshot, String clock, String webhookUrl, Object fixtures) {
  /** Every session starts frozen at this instant unless told otherwise, so dates do not depend on the day. */
  public static final String START_CLOCK = "2026-03-01T12:00:00.000Z";

  public static SessionOptions defaults() {
    return new SessionOptions(Emulator.runLabel(), null, null, START_CLOCK, null, null);
  }

  public SessionOptions label(String value) {
    return new SessionOptions(value, seed, snapshot, clock, webhookUrl, fixtures);
  }

  public SessionOptions seed(String value) {
    return new SessionOptions(label, value, snapshot, clock, webhookUrl, fixtures);
  }

  /** Start from a root snapshot; the clock is the snapshot's. */
  public SessionOptions snapshot(String name) {
    return new SessionOptions(label, seed, name, null, webhookUrl, fixtures);
  }

  public SessionOptions clock(String value) {
    return new SessionOptions(label, seed, snapshot, value, webhookUrl, fixtures);
  }

  public SessionOptions webhookUrl(String value) {
    return new SessionOptions(label, seed, snapshot, clock, value, fixtures);
  }

  public SessionOptions fixtures(Object value) {
    return new SessionOptions(label, seed, snapshot, clock, webhookUrl, value);
  }

  /** The body of {@code POST /_emulator/sessions}. */
  public String toJson() {
    Map<String, Object> body = new LinkedHashMap<>();
    if (clock != null) body.put("clock", clock);
    if (label != null) body.put("label", label);
    if (seed != null) body.put("seed", seed);
    if (snapshot != null) body.put("snapshot", snapshot);
    if (webhookUrl != null) body.put("webhookUrl", webhookUrl);
    String json = Json.write(body);
    if (fixtures == null) return json;
    String fixturesJson = fixtures instanceof String s ? s : Json.write(fixtures);
    return json.substring(0, json.length() - 1) + (body.isEmpty() ? "" : ",") + "\"fixtures\":" + fixturesJson + "}";
  }
}
