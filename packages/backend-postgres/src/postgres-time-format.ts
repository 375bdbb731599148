import { QesError } from "@qes/core";

/** BigQuery format elements that map to one to_char pattern. */
const ELEMENTS: Record<string, string> = {
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
};

/** BigQuery format → to_timestamp pattern (PARSE_TIMESTAMP), where %z reads an offset. */
export function translateTimeFormat(format: string): string {
  let out = "";
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c !== "%") {
      out += /[A-Za-z]/.test(c) ? `"${c}"` : c;
      continue;
    }
    const next = format[i + 1];
    i++;
    if (next === "E") {
      const spec = format.slice(i + 1, i + 3);
      i += 2;
      if (spec === "*S" || spec === "6S") out += "SS.US";
      else if (spec === "3S") out += "SS.MS";
      else throw new QesError("sql_invalid", `Format element %E${spec} is not supported.`);
      continue;
    }
    if (next === "%") {
      out += "%";
      continue;
    }
    if (next === "z") {
      out += "TZHTZM";
      continue;
    }
    const element = next === undefined ? undefined : ELEMENTS[next];
    if (element === undefined)
      throw new QesError("sql_invalid", `Format element %${next ?? ""} is not supported.`);
    out += element;
  }
  return out;
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
  const local = `(${ts} AT TIME ZONE ${z})`;
  const pieces: string[] = [];
  let pattern = "";
  const flush = () => {
    if (pattern) pieces.push(`to_char(${local}, ${quote(pattern)})`);
    pattern = "";
  };
  const expr = (sql: string) => {
    flush();
    pieces.push(sql);
  };
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c !== "%") {
      pattern += /[A-Za-z]/.test(c) ? `"${c}"` : c;
      continue;
    }
    const n = format[i + 1];
    i++;
    if (n === "E") {
      const spec = format.slice(i + 1, i + 3);
      i += 2;
      if (spec === "*S" || spec === "6S") pattern += "SS.US";
      else if (spec === "3S") pattern += "SS.MS";
      else throw new QesError("sql_invalid", `Format element %E${spec} is not supported.`);
      continue;
    }
    if (n === "%") {
      pattern += "%";
      continue;
    }
    if (n === "s") {
      expr(`CAST(CAST(floor(extract(epoch FROM ${ts})) AS bigint) AS text)`);
      continue;
    }
    if (n === "e") {
      expr(`lpad(CAST(extract(day FROM ${local}) AS integer)::text, 2, ' ')`);
      continue;
    }
    if (n === "z") {
      const off = `CAST(extract(epoch FROM (${local} - (${ts} AT TIME ZONE 'UTC'))) AS integer)`;
      expr(
        `(CASE WHEN ${off} < 0 THEN '-' ELSE '+' END || lpad((abs(${off}) / 3600)::text, 2, '0') || lpad((abs(${off}) % 3600 / 60)::text, 2, '0'))`,
      );
      continue;
    }
    if (n === "Z") {
      expr(z);
      continue;
    }
    const element = n === undefined ? undefined : ELEMENTS[n];
    if (element === undefined)
      throw new QesError("sql_invalid", `Format element %${n ?? ""} is not supported.`);
    pattern += element;
  }
  flush();
  return pieces.length === 0 ? "''" : pieces.length === 1 ? pieces[0]! : `(${pieces.join(" || ")})`;
}
