import { parseTimeFormat, QesError } from "@qes/core";
import { STRFTIME } from "./duckdb-time.ts";

/** BigQuery format → DuckDB strptime format (PARSE_TIMESTAMP). */
export function translateTimeFormat(format: string): string {
  return parseTimeFormat(format)
    .map((p) => {
      if ("literal" in p) return p.literal.replace(/%/g, "%%");
      if (p.element === "z" || p.element === "e") return `%${p.element === "e" ? "-d" : "z"}`;
      const f = STRFTIME[p.element];
      if (!f) throw new QesError("sql_invalid", `PARSE_TIMESTAMP does not support %${p.element} on DuckDB.`);
      return f;
    })
    .join("");
}
