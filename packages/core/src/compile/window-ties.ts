/**
 * ROW_NUMBER, LAG, LEAD, FIRST_VALUE … depend on the order of rows that tie on their window's
 * ORDER BY keys, which BigQuery leaves unspecified and engines choose differently: the same query
 * numbered e06, e07 on one backend and e07, e06 on the other. As with ties under LIMIT
 * (SqlEmitter.withTiesBroken, DESIGN.md §3), the window's order is completed by the SELECT's other
 * columns: rows equal in all of them are interchangeable in the result.
 */
import type { Expr, OrderItem, Select } from "./ir.ts";

const ORDER_SENSITIVE = new Set([
  "ROW_NUMBER",
  "LAG",
  "LEAD",
  "FIRST_VALUE",
  "LAST_VALUE",
  "NTH_VALUE",
  "NTILE",
  "ARRAY_AGG",
  "STRING_AGG",
]);

type Call = Extract<Expr, { k: "call" }>;

export function completeWindowOrders(select: Select): void {
  const windowed: Call[] = [];
  const roots = [...select.items.map((i) => i.expr), ...(select.qualify ? [select.qualify] : [])];
  for (const e of roots) collectWindowed(e, windowed);
  if (!windowed.length) return;
  const keys = select.items.map((i) => i.expr).filter((e) => isTieKey(e));
  for (const call of windowed) {
    const over = call.over!;
    if (!ORDER_SENSITIVE.has(call.fn) || (!over.orderBy.length && call.fn !== "ROW_NUMBER")) continue;
    if (call.fn !== "ROW_NUMBER" && over.frame === undefined && !["LAG", "LEAD", "NTILE"].includes(call.fn))
      // RANGE frames of FIRST_VALUE/ARRAY_AGG … include every peer: ties do not matter there
      continue;
    const seen = new Set([...over.partitionBy, ...over.orderBy.map((o) => o.expr)].map(keyOf));
    const extra: OrderItem[] = [];
    for (const k of keys) {
      const text = keyOf(k);
      if (seen.has(text)) continue;
      seen.add(text);
      extra.push({ expr: k, desc: false });
    }
    if (extra.length) call.over = { ...over, orderBy: [...over.orderBy, ...extra] };
  }
}

function keyOf(e: Expr): string {
  return JSON.stringify(e, (_k, v) => (typeof v === "bigint" ? `${v}n` : v));
}

/** A selected value that can order rows: no window call inside, not a constant, scalar. */
function isTieKey(e: Expr): boolean {
  if (e.k === "lit" || e.k === "param" || e.type.t !== "scalar") return false;
  const found: Call[] = [];
  collectWindowed(e, found);
  return found.length === 0;
}

function collectWindowed(e: Expr, out: Call[]): void {
  switch (e.k) {
    case "call":
      if (e.over) out.push(e);
      for (const a of e.args) collectWindowed(a, out);
      return;
    case "op":
      for (const a of e.args) collectWindowed(a, out);
      return;
    case "case":
      if (e.operand) collectWindowed(e.operand, out);
      for (const [w, t] of e.whens) {
        collectWindowed(w, out);
        collectWindowed(t, out);
      }
      if (e.else) collectWindowed(e.else, out);
      return;
    case "cast":
      collectWindowed(e.expr, out);
      return;
    case "in":
      collectWindowed(e.expr, out);
      for (const x of e.list) collectWindowed(x, out);
      return;
    default:
      return;
  }
}
