package dev.servicesandbox;

/** Text that is not JSON (RFC 8259), or a value {@link Json#write} cannot write. */
public class JsonException extends SandboxException {
  private static final long serialVersionUID = 1L;
  /** Where the problem was found; -1 when writing. */
  private final int offset;

  /**
   * An exception for bad JSON at {@code offset}.
   *
   * @param message what is wrong
   * @param offset the character offset where it was found; -1 when writing
   */
  public JsonException(String message, int offset) {
    super(offset < 0 ? message : "bad JSON at " + offset + ": " + message);
    this.offset = offset;
  }

  /**
   * Where in the text the problem was found.
   *
   * @return the character offset, or -1 for a value that cannot be written
   */
  public int offset() {
    return offset;
  }
}
