package dev.servicesandbox;

import dev.servicesandbox.model.SettleReport;

/** {@code POST /_emulator/settle} answered {@code settled: false}: work was still running when its timeout ended (docs/control-plane.md#settle). */
public class NotSettledException extends SandboxException {
  private static final long serialVersionUID = 1L;
  private final transient SettleReport report;

  /**
   * An exception for this report.
   *
   * @param report the settle report, with what was still waiting
   */
  public NotSettledException(SettleReport report) {
    super("the sandbox did not settle: " + report);
    this.report = report;
  }

  /**
   * The report of the settle that timed out.
   *
   * @return the report (what was waiting, the emulated clock)
   */
  public SettleReport report() {
    return report;
  }
}
