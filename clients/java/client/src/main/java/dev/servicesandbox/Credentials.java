package dev.servicesandbox;

/**
 * The keys of a session's first programme, as {@code POST /_emulator/sessions} answers them (docs/sessions.md):
 * the SINGLE_USER key and the user it is bound to, the MULTI_USER key and the webhook key; {@code single} or
 * {@code multi} is null when the session's fixtures have no such key.
 *
 * @param programmeId the programme, {@code X-Service-Program-Id}
 * @param single the SINGLE_USER key
 * @param singleUserId the user the SINGLE_USER key is bound to
 * @param multi the MULTI_USER key
 * @param webhook the key that signs the webhooks
 */
public record Credentials(String programmeId, Key single, String singleUserId, Key multi, Key webhook) {
  /**
   * The default fixtures' keys (README.md#default-fixture-credentials), for a server without sessions.
   *
   * @return the credentials of {@code prg_sandbox}
   */
  public static Credentials defaults() {
    return new Credentials("prg_sandbox", new Key("pk_sandbox_single", "sk_sandbox_single_secret"), "usr_acme",
        new Key("pk_sandbox_multi", "sk_sandbox_multi_secret"), new Key("wk_sandbox", "whsec_sandbox_secret"));
  }

  static Credentials from(Object credentials) {
    return new Credentials((String) Json.get(credentials, "programmeId"), key(credentials, "single"),
        (String) Json.get(credentials, "single", "userId"), key(credentials, "multi"), key(credentials, "webhook"));
  }

  private static Key key(Object credentials, String name) {
    Object apiKey = Json.get(credentials, name, "apiKey");
    return apiKey == null ? null : new Key((String) apiKey, (String) Json.get(credentials, name, "secret"));
  }
}
