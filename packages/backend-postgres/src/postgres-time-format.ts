import {
  type FractionSqlOps,
  fractionDigits,
  nullForNullInstant,
  parseTimeFormat,
  QesError,
  secondsWithFractionSql,
} from "@qes/core";
import { postgresZone } from "./postgres-time-zone.ts";

/** BigQuery format elements that map to one to_char / to_timestamp pattern. */
const PATTERNS: Record<string, string> = {
  Y: "YYYY",
  m: "MM",
  d: "DD",
  H: "HH24",
  M: "MI",
  S: "SS",
  y: "YY",
  j: "DDD",
  b: "Mon",
  B: "FMMonth",
  a: "Dy",
  A: "FMDay",
  I: "HH12",
  p: "AM",
  F: "YYYY-MM-DD",
  T: "HH24:MI:SS",
  D: "MM/DD/YY",
  R: "HH24:MI",
  // PARSE_TIMESTAMP reads every %E<n>S as %E*S (readingFormat)
  "E*S": "SS.US",
};

const POSTGRES_TEXT: FractionSqlOps = {
  text: (n) => `CAST(${n} AS text)`,
  trimZeros: (t) => `rtrim(${t}, '0')`,
};

/** Literal text in a to_char pattern: letters are quoted so they are not read as fields. */
function patternLiteral(text: string): string {
  return text.replace(/[A-Za-z]+/g, (w) => `"${w}"`);
}

/** BigQuery format → to_timestamp pattern (PARSE_TIMESTAMP), where %z reads an offset. */
export function translateTimeFormat(format: string): string {
  return parseTimeFormat(format)
    .map((p) => {
      if ("literal" in p) return patternLiteral(p.literal);
      if (p.element === "z") return "TZHTZM";
      // a space-padded day: to_timestamp skips the space before a number
      if (p.element === "e") return "DD";
      const pattern = PATTERNS[p.element];
      if (!pattern)
        throw new QesError("sql_invalid", `PARSE_TIMESTAMP does not support %${p.element} on PostgreSQL.`);
      return pattern;
    })
    .join("");
}

/**
 * FORMAT_TIMESTAMP on PostgreSQL, piece by piece: to_char for most elements, expressions for
 * %s (epoch seconds), %e (space-padded day), %z and %Z (in the zone asked for).
 */
export function formatTimestampSql(
  format: string,
  ts: string,
  zone: string | undefined,
  quote: (s: string) => string,
): string {
  const z = zone ?? "'UTC'";
  const local = `(${ts} AT TIME ZONE ${postgresZone(zone)})`;
  const offset = `CAST(extract(epoch FROM (${local} - (${ts} AT TIME ZONE 'UTC'))) AS integer)`;
  const pieces: string[] = [];
  let pattern = "";
  const flush = () => {
    if (pattern) pieces.push(`to_char(${local}, ${quote(pattern)})`);
    pattern = "";
  };
  for (const p of parseTimeFormat(format)) {
    if ("literal" in p) {
      pattern += patternLiteral(p.literal);
      continue;
    }
    // %z is +HHMM, %Ez (RFC 3339) +HH:MM
    const offsetText = (colon: string) =>
      `(CASE WHEN ${offset} < 0 THEN '-' ELSE '+' END || lpad(CAST(abs(${offset}) / 3600 AS text), 2, '0') || '${colon}' || lpad(CAST(abs(${offset}) % 3600 / 60 AS text), 2, '0'))`;
    const special: Record<string, string> = {
      s: `CAST(CAST(floor(extract(epoch FROM ${ts})) AS bigint) AS text)`,
      e: `lpad(CAST(CAST(extract(day FROM ${local}) AS integer) AS text), 2, ' ')`,
      k: `lpad(CAST(CAST(extract(hour FROM ${local}) AS integer) AS text), 2, ' ')`,
      l: `lpad(to_char(${local}, 'FMHH12'), 2, ' ')`,
      u: `to_char(${local}, 'ID')`,
      z: offsetText(""),
      Ez: offsetText(":"),
      Z: z,
    };
    const digits = fractionDigits(p.element);
    if (digits !== undefined) {
      flush();
      const micros = `(CAST(extract(microseconds FROM ${local}) AS integer) % 1000000)`;
      pieces.push(secondsWithFractionSql(digits, `to_char(${local}, 'SS')`, micros, POSTGRES_TEXT));
    } else if (p.element in special) {
      flush();
      pieces.push(special[p.element]!);
    } else pattern += PATTERNS[p.element];
  }
  flush();
  const sql = pieces.length === 0 ? "''" : pieces.length === 1 ? pieces[0]! : `(${pieces.join(" || ")})`;
  return nullForNullInstant(format, ts, sql);
}
