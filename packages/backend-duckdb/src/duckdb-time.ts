import { fixedZoneOffset, parseTimeFormat, zoneRules } from "@qes/core";

/**
 * Time zones and timestamp text on DuckDB: a literal zone's offsets come from tables built at
 * compile time from the runtime's tz database; a parameter's, known only when bound, from the ICU
 * extension DuckDB links in. Timestamps are naive UTC values (TIMESTAMP); a local time is the UTC
 * value shifted.
 */

/** A zone: a literal's name, or the SQL of a parameter bound by bindDuckdbZone. */
export type DuckdbZone = string | { sql: string };

const BOUND_OFFSET = "'^[+-][0-9]{2}:[0-9]{2}$'";

/**
 * A time-zone parameter's value as the SQL of zoneOffsetSql reads it: an offset as `±HH:MM`
 * (ICU knows no such zone), a tz database name as it is.
 */
export function bindDuckdbZone(zone: string): string {
  const offset = fixedZoneOffset(zone);
  if (offset === undefined) return zone.trim();
  const abs = Math.abs(offset);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${offset < 0 ? "-" : "+"}${two(Math.floor(abs / 3600))}:${two(Math.floor((abs % 3600) / 60))}`;
}

/** Seconds east of UTC in `zone` at the UTC instant `ts`. */
export function zoneOffsetSql(ts: string, zone: DuckdbZone): string {
  if (typeof zone !== "string") {
    // ICU never sees an offset (the ELSE would raise on it even where the THEN is taken)
    const z = zone.sql;
    const fixed = `regexp_matches(${z}, ${BOUND_OFFSET})`;
    const seconds = `(CASE WHEN left(${z}, 1) = '-' THEN -1 ELSE 1 END) * (CAST(substr(${z}, 2, 2) AS BIGINT) * 3600 + CAST(substr(${z}, 5, 2) AS BIGINT) * 60)`;
    const named = `CASE WHEN ${fixed} THEN 'UTC' ELSE ${z} END`;
    return `(CASE WHEN ${fixed} THEN ${seconds} ELSE CAST(epoch(timezone(${named}, timezone('UTC', ${ts}))) - epoch(${ts}) AS BIGINT) END)`;
  }
  const rules = zoneRules(zone);
  if (rules.transitions.length === 0) return `CAST(${rules.offsets[0]} AS BIGINT)`;
  const transitions = `[${rules.transitions.map((t) => `${t}::BIGINT`).join(", ")}]`;
  const offsets = `[${rules.offsets.join(", ")}]`;
  return `list_extract(${offsets}, len(list_filter(${transitions}, x -> x <= epoch_us(${ts}))) + 1)`;
}

/** The wall-clock time in `zone` of UTC instant `ts`. */
export function toLocalSql(ts: string, zone: DuckdbZone): string {
  return `(${ts} + to_seconds(${zoneOffsetSql(ts, zone)}))`;
}

/** The UTC instant of wall-clock time `local` in `zone` (the earlier one at a DST overlap). */
export function fromLocalSql(local: string, zone: DuckdbZone): string {
  const guess = `(${local} - to_seconds(${zoneOffsetSql(local, zone)}))`;
  return `(${local} - to_seconds(${zoneOffsetSql(guess, zone)}))`;
}

/** A zone argument: a string literal's text, or a parameter's SQL (core allows nothing else). */
export function zoneName(sql: string | undefined): DuckdbZone {
  if (sql === undefined) return "UTC";
  const m = /^'((?:[^']|'')*)'$/.exec(sql.trim());
  if (!m) return { sql };
  return m[1]!.replace(/''/g, "'");
}

const EXPLICIT_OFFSET = "'[T ]\\d{1,2}:\\d{2}(:\\d{2}(\\.\\d+)?)?\\s*([+-])(\\d{1,2})(:?(\\d{2}))?\\s*$'";

/**
 * BigQuery's canonical timestamp text → UTC TIMESTAMP: an explicit offset wins; otherwise the
 * text is a wall-clock time in `zone` (UTC by default).
 */
export function stringToTimestampSql(s: string, zone: DuckdbZone = "UTC", safe = false): string {
  const cast = safe ? "TRY_CAST" : "CAST";
  const bare = `regexp_replace(regexp_replace(${s}, '\\s*([+-]\\d{1,2}(:?\\d{2})?|Z|UTC)\\s*$', ''), '[Tt]', ' ')`;
  const sign = `CASE regexp_extract(${s}, ${EXPLICIT_OFFSET}, 3) WHEN '-' THEN -1 ELSE 1 END`;
  const hours = `CAST(regexp_extract(${s}, ${EXPLICIT_OFFSET}, 4) AS BIGINT)`;
  const minutes = `coalesce(TRY_CAST(regexp_extract(${s}, ${EXPLICIT_OFFSET}, 6) AS BIGINT), 0)`;
  const local = `${cast}(${bare} AS TIMESTAMP)`;
  const inZone =
    typeof zone === "string" && zoneRules(zone).transitions.length === 0 && zoneRules(zone).offsets[0] === 0
      ? local
      : fromLocalSql(local, zone);
  return `CASE WHEN regexp_matches(${s}, ${EXPLICIT_OFFSET}) THEN ${local} - to_seconds(${sign} * (${hours} * 3600 + ${minutes} * 60)) WHEN regexp_matches(${s}, '(Z|UTC)\\s*$') THEN ${local} ELSE ${inZone} END`;
}

/** BigQuery format elements that strftime writes as they are, or as a short sequence. */
export const STRFTIME: Record<string, string> = {
  Y: "%Y",
  m: "%m",
  d: "%d",
  H: "%H",
  M: "%M",
  S: "%S",
  y: "%y",
  j: "%j",
  b: "%b",
  B: "%B",
  a: "%a",
  A: "%A",
  I: "%I",
  p: "%p",
  F: "%Y-%m-%d",
  T: "%H:%M:%S",
  D: "%m/%d/%y",
  R: "%H:%M",
  "E*S": "%S.%f",
  E6S: "%S.%f",
  E3S: "%S.%g",
};

/**
 * FORMAT_TIMESTAMP on DuckDB, piece by piece: strftime lacks several BigQuery elements (%e,
 * %s, and %z / %Z in a zone other than UTC).
 */
export function formatTimestampSql(format: string, ts: string, zone?: DuckdbZone): string {
  const local = zone ? toLocalSql(ts, zone) : ts;
  const offset = zone ? zoneOffsetSql(ts, zone) : "CAST(0 AS BIGINT)";
  const pieces: string[] = [];
  let strf = "";
  const flush = () => {
    if (strf) pieces.push(`strftime(${local}, '${strf.replace(/'/g, "''")}')`);
    strf = "";
  };
  for (const p of parseTimeFormat(format)) {
    if ("literal" in p) {
      strf += p.literal.replace(/%/g, "%%");
      continue;
    }
    const special: Record<string, string> = {
      e: `lpad(CAST(day(${local}) AS VARCHAR), 2, ' ')`,
      s: `CAST(CAST(floor(epoch_us(${ts}) / 1000000) AS BIGINT) AS VARCHAR)`,
      z: `(CASE WHEN ${offset} < 0 THEN '-' ELSE '+' END || lpad(CAST(abs(${offset}) // 3600 AS VARCHAR), 2, '0') || lpad(CAST(abs(${offset}) % 3600 // 60 AS VARCHAR), 2, '0'))`,
      Z: typeof zone === "object" ? zone.sql : `'${(zone ?? "UTC").replace(/'/g, "''")}'`,
    };
    if (p.element in special) {
      flush();
      pieces.push(special[p.element]!);
    } else strf += STRFTIME[p.element];
  }
  flush();
  return pieces.length === 0 ? "''" : pieces.length === 1 ? pieces[0]! : `(${pieces.join(" || ")})`;
}
