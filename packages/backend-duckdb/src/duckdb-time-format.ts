import { QesError } from "@qes/core";

/**
 * BigQuery format elements → DuckDB strftime/strptime. Most are the same C-style specifiers;
 * BigQuery's %E<n>S (seconds with n fractional digits) and %E*S differ.
 */
const SAME = new Set([..."YmdHMSyjbBaAIpeFTDRzZ%"]);

export function translateTimeFormat(format: string): string {
  let out = "";
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c !== "%") {
      out += c;
      continue;
    }
    const next = format[i + 1];
    if (next === "E") {
      const spec = format.slice(i + 2, i + 4);
      if (spec === "*S" || spec === "6S") out += "%S.%f";
      else if (spec === "3S") out += "%S.%g";
      else throw new QesError("sql_invalid", `Format element %E${spec} is not supported.`);
      i += 3;
      continue;
    }
    if (next === undefined || !SAME.has(next))
      throw new QesError("sql_invalid", `Format element %${next ?? ""} is not supported.`);
    out += next === "Z" ? "UTC" : `%${next}`;
    i++;
  }
  return out;
}
