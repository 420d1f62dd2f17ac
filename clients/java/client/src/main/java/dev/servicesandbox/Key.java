package dev.servicesandbox;

/** An API key and its secret (docs/authentication.md); {@code toString} leaves the secret out. */
public record Key(String apiKey, String secret) {
  @Override
  public String toString() {
    return "Key[" + apiKey + "]";
  }
}
