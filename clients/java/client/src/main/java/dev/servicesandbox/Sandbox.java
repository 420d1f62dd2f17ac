package dev.servicesandbox;

/** The kit's identity (docs/clients.md#java). */
public final class Sandbox {
  /** The kit's version: the server's version it is made for (each kit and the server share one version). */
  public static final String VERSION = "0.2.0";

  private Sandbox() {}
}
