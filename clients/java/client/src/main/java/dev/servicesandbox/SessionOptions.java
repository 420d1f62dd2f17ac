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
 * @param scenario a scenario to start from (docs/sessions.md#scenarios): its name (a String matching a scenario the
 *     server knows), a scenario file's text, or the scenario as a Map; null: none
 */
public record SessionOptions(String label, String seed, String snapshot, String clock, String webhookUrl, Object fixtures, Object scenario) {
  /** Every session starts frozen at this instant unless told otherwise, so dates do not depend on the day. */
  public static final String START_CLOCK = "2026-03-01T12:00:00.000Z";

  /**
   * The defaults: the run's label, the server's fixtures, the clock frozen at {@link #START_CLOCK}.
   *
   * @return the options
   */
  public static SessionOptions defaults() {
    return new SessionOptions(Emulator.runLabel(), null, null, START_CLOCK, null, null, null);
  }

  /**
   * Another label.
   *
   * @param value the label
   * @return the changed options
   */
  public SessionOptions label(String value) {
    return new SessionOptions(value, seed, snapshot, clock, webhookUrl, fixtures, scenario);
  }

  /**
   * Ids drawn from this seed (reproducible ids).
   *
   * @param value the seed
   * @return the changed options
   */
  public SessionOptions seed(String value) {
    return new SessionOptions(label, value, snapshot, clock, webhookUrl, fixtures, scenario);
  }

  /**
   * Start from a root snapshot; the clock is the snapshot's.
   *
   * @param name the snapshot's name
   * @return the changed options
   */
  public SessionOptions snapshot(String name) {
    return new SessionOptions(label, seed, name, null, webhookUrl, fixtures, scenario);
  }

  /**
   * Another clock: an ISO instant to start frozen at, or {@code realtime}.
   *
   * @param value the clock
   * @return the changed options
   */
  public SessionOptions clock(String value) {
    return new SessionOptions(label, seed, snapshot, value, webhookUrl, fixtures, scenario);
  }

  /**
   * A webhook endpoint the emulator posts to directly.
   *
   * @param value the URL
   * @return the changed options
   */
  public SessionOptions webhookUrl(String value) {
    return new SessionOptions(label, seed, snapshot, clock, value, fixtures, scenario);
  }

  /**
   * A fixtures document of the session's own.
   *
   * @param value a Map, or JSON text
   * @return the changed options
   */
  public SessionOptions fixtures(Object value) {
    return new SessionOptions(label, seed, snapshot, clock, webhookUrl, value, scenario);
  }

  /**
   * Start from a scenario (docs/sessions.md#scenarios): its seed, clock and fixtures apply and its {@code given} is
   * built before the session is answered, so the default clock is dropped ({@link Session#scenario()} says what it
   * made).
   *
   * @param value the name of a scenario the server knows, a scenario file's text, or the scenario as a Map
   * @return the changed options
   */
  public SessionOptions scenario(Object value) {
    return new SessionOptions(label, seed, snapshot, START_CLOCK.equals(clock) ? null : clock, webhookUrl, fixtures, value);
  }

  /**
   * Start from the scenario in this file (YAML or JSON), read now and sent as text: as {@link #scenario(Object)}.
   *
   * @param file the scenario file
   * @return the changed options
   * @throws java.io.UncheckedIOException when the file cannot be read
   */
  public SessionOptions scenarioFile(java.nio.file.Path file) {
    try {
      return scenario(java.nio.file.Files.readString(file));
    } catch (java.io.IOException error) {
      throw new java.io.UncheckedIOException(error);
    }
  }

  /**
   * The body of {@code POST /_emulator/sessions}.
   *
   * @return JSON text
   */
  public String toJson() {
    Map<String, Object> body = new LinkedHashMap<>();
    if (clock != null) body.put("clock", clock);
    if (label != null) body.put("label", label);
    if (seed != null) body.put("seed", seed);
    if (snapshot != null) body.put("snapshot", snapshot);
    if (webhookUrl != null) body.put("webhookUrl", webhookUrl);
    if (scenario != null) body.put("scenario", scenario);
    String json = Json.write(body);
    if (fixtures == null) return json;
    String fixturesJson = fixtures instanceof String s ? s : Json.write(fixtures);
    return json.substring(0, json.length() - 1) + (body.isEmpty() ? "" : ",") + "\"fixtures\":" + fixturesJson + "}";
  }
}
