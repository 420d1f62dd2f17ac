package dev.servicesandbox;

/**
 * An API key and its secret (docs/authentication.md); {@code toString} leaves the secret out.
 *
 * @param apiKey the key, {@code X-Service-Api-Key}
 * @param secret the secret it signs with
 */
public record Key(String apiKey, String secret) {
  @Override
  public String toString() {
    return "Key[" + apiKey + "]";
  }
}
