import { QesError } from "@qes/core";

/**
 * 400 `invalid_parameter` for a NUL byte in any parameter name or value (consumer SQL included),
 * before anything compiles or runs: engines disagree about NUL (PostgreSQL's wire protocol cannot
 * carry one and fails the connection's message, DuckDB cuts or refuses), and no log query needs it.
 */
export function refuseNulBytes(params: Readonly<Record<string, string>>): void {
  for (const [name, value] of Object.entries(params)) {
    if (name.includes("\0") || value.includes("\0")) {
      const shown = name.replaceAll("\0", "\\0");
      throw new QesError(
        "invalid_parameter",
        `Parameter "${shown}" contains a NUL byte (%00), which no parameter or SQL text may hold.`,
        { param: shown },
      );
    }
  }
}
