import { type AstNode, parseSelect, tableNameOf } from "../parse/parse-sql.ts";

const MICROS: Record<string, bigint> = {
  MICROSECOND: 1n,
  MILLISECOND: 1_000n,
  SECOND: 1_000_000n,
  MINUTE: 60_000_000n,
  HOUR: 3_600_000_000n,
  DAY: 86_400_000_000n,
  WEEK: 7n * 86_400_000_000n,
  MONTH: 31n * 86_400_000_000n,
  QUARTER: 92n * 86_400_000_000n,
  YEAR: 366n * 86_400_000_000n,
};

export interface QueryWindow {
  /** the longest `INTERVAL n UNIT` the SQL names, in µs (months and years at their longest); 0 when none */
  longestIntervalMicros: bigint;
  /** every table name the SQL mentions (sources and CTE names alike: the caller knows its sources) */
  tables: string[];
}

type Node = { [key: string]: unknown };

/**
 * How far back a stored query reads, as far as its text says: the longest interval it names
 * (`timestamp_sub(current_timestamp(), interval 7 day)` → 7 days), and the tables it reads. Used
 * to warn when a source's retention is shorter than what a stored query asks for; a query whose
 * window comes from a parameter is not seen.
 */
export function queryWindow(sql: string): QueryWindow {
  let longest = 0n;
  const tables = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const v of value) walk(v);
      return;
    }
    if (value === null || typeof value !== "object") return;
    const node = value as Node;
    if (node.type === "function" && JSON.stringify(node.name ?? "").includes("__qes_interval")) {
      const args = (node.args as Node | undefined)?.value as Node[] | undefined;
      // `timestamp_add(current_timestamp(), interval -7 day)` reads as far back as `_sub(… 7 day)`
      const amount = args?.[0];
      const n = amount?.type === "unary_expr" && amount.operator === "-" ? (amount.expr as Node) : amount;
      const unit = args?.[1];
      if (n?.type === "number" && typeof unit?.value === "string") {
        const micros = MICROS[unit.value.toUpperCase()];
        const count = Number(n.value);
        if (micros !== undefined && Number.isFinite(count) && count > 0) {
          const total = BigInt(Math.ceil(count)) * micros;
          if (total > longest) longest = total;
        }
      }
    }
    if (typeof node.table === "string" && "db" in node) tables.add(tableNameOf(node as AstNode));
    for (const v of Object.values(node)) walk(v);
  };
  walk(parseSelect(sql));
  return { longestIntervalMicros: longest, tables: [...tables] };
}
