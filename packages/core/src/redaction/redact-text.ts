import type { WireValue } from "../wire/wire-type.ts";
import { ADDRESS_CHARS, ADDRESS_PATTERN, IPV6_HINT_PATTERN, REDACTED } from "./address-pattern.ts";

const ADDRESS = new RegExp(ADDRESS_PATTERN, "g");

// Sound filters that spare most text the address pattern (tried at every position, it costs
// ~50 µs per 100 characters in V8). Every address is inside one run of SPAN's characters, whose
// neighbours are non-word characters, so `\b` reads the same inside the run as in the whole text;
// and every address holds three IPv4 separators between digits, a `::`, or five `group:`.
const SEP4 = "(?:\\.|%2[Ee])";
const MAY_HOLD = new RegExp(`\\d${SEP4}\\d{1,3}${SEP4}\\d{1,3}${SEP4}\\d|${IPV6_HINT_PATTERN}`);
const SPAN = new RegExp(`${ADDRESS_CHARS}+`, "g");

/**
 * `text` with every IPv4 and IPv6 address replaced by `REDACTED` (DESIGN.md §7): the same
 * replacements the engines make with `ADDRESS_PATTERN` (address-pattern.ts says what counts).
 */
export function redactText(text: string): string {
  if (!MAY_HOLD.test(text)) return text;
  return text.replace(SPAN, (span) => (MAY_HOLD.test(span) ? span.replace(ADDRESS, REDACTED) : span));
}

/**
 * A copy of a wire value with every string, at any depth, passed through `redactText`. Keys,
 * numbers, booleans and nulls are untouched.
 */
export function redactValue(value: WireValue): WireValue {
  if (typeof value === "string") return redactText(value);
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(redactValue);
  // a key named `__proto__` is data: a prototype-less object keeps it as an own property
  const out: { [key: string]: WireValue } = Object.create(null);
  for (const key of Object.keys(value)) out[key] = redactValue(value[key] as WireValue);
  return out;
}

/** every row redacted */
export function redactRows(rows: readonly Record<string, WireValue>[]): Record<string, WireValue>[] {
  return rows.map((row) => redactValue(row) as Record<string, WireValue>);
}
