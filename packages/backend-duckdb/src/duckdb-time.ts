import {
  type FractionSqlOps,
  fixedZoneOffset,
  fractionDigits,
  nullForNullInstant,
  parseTimeFormat,
  secondsWithFractionSql,
  zoneRules,
} from "@qes/core";
import { bindOnce } from "./duckdb-sql.ts";

/**
 * Time zones and timestamp text on DuckDB: a zone's offsets come from the ICU extension DuckDB
 * links in (its name checked against the runtime's tz database when compiled or bound; ICU
 * raises on a name it does not know); a fixed offset is arithmetic. Timestamps are naive UTC values
 * (TIMESTAMP); a local time is the UTC value shifted. (Offsets read from a table of transitions
 * built at compile time, `list_filter` over ~260 of them per row, took 23 s for 20,000 rows.)
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

/**
 * A zone parameter's SQL read apart: whether it holds an offset (`±HH:MM`), that offset's seconds,
 * and the name ICU reads — 'UTC' for an offset, since ICU never sees one (an ELSE would raise on
 * it even where the THEN is taken).
 */
function boundZone(z: string): { fixed: string; seconds: string; named: string } {
  const fixed = `regexp_matches(${z}, ${BOUND_OFFSET})`;
  return {
    fixed,
    seconds: `(CASE WHEN left(${z}, 1) = '-' THEN -1 ELSE 1 END) * (CAST(substr(${z}, 2, 2) AS BIGINT) * 3600 + CAST(substr(${z}, 5, 2) AS BIGINT) * 60)`,
    named: `CASE WHEN ${fixed} THEN 'UTC' ELSE ${z} END`,
  };
}

/** Seconds east of UTC in `zone` at the UTC instant `ts`. */
export function zoneOffsetSql(ts: string, zone: DuckdbZone): string {
  return bindOnce(ts, (t) => offsetSql(t, zone));
}

function offsetSql(ts: string, zone: DuckdbZone): string {
  if (typeof zone !== "string") {
    const { fixed, seconds, named } = boundZone(zone.sql);
    return `(CASE WHEN ${fixed} THEN ${seconds} ELSE ${icuOffsetSql(ts, named)} END)`;
  }
  const rules = zoneRules(zone); // refuses unknown zones
  if (rules.transitions.length === 0) return `CAST(${rules.offsets[0]} AS BIGINT)`;
  return icuOffsetSql(ts, quotedTzName(zone));
}

function quotedTzName(zone: string): string {
  return `'${zone.trim().replace(/'/g, "''")}'`;
}

/** Seconds east of UTC in the tz database zone named by `name` (SQL) at the UTC instant `ts`. */
function icuOffsetSql(ts: string, name: string): string {
  return `CAST(epoch(timezone(${name}, timezone('UTC', ${ts}))) - epoch(${ts}) AS BIGINT)`;
}

/** The wall-clock time in `zone` of UTC instant `ts`. */
export function toLocalSql(ts: string, zone: DuckdbZone): string {
  return bindOnce(ts, (t) => `(${t} + to_seconds(${offsetSql(t, zone)}))`);
}

/**
 * The UTC instant of wall-clock time `local` in `zone`; a reading a DST transition skips or
 * repeats takes the offset in effect before it, as on BigQuery (docs/compiler.md "Wall-clock
 * readings"): `a` is the offset a day before (before any transition near), and the reading placed
 * with it is kept when it holds that offset (the reading before a transition, or the earlier of a
 * repeated one), else placed with the offset it lands on (after), unless that fails too
 * (skipped: `a` again).
 */
export function fromLocalSql(local: string, zone: DuckdbZone): string {
  return bindOnce(local, (l) => placedInZone(l, zone));
}

function placedInZone(local: string, zone: DuckdbZone): string {
  if (typeof zone !== "string") {
    const { fixed, seconds, named } = boundZone(zone.sql);
    const inZone = placeReading(local, (ts) => icuOffsetSql(ts, named));
    return `(CASE WHEN ${fixed} THEN (${local} - to_seconds(${seconds})) ELSE ${inZone} END)`;
  }
  const rules = zoneRules(zone);
  if (rules.transitions.length === 0) return `(${local} - to_seconds(${rules.offsets[0]}))`;
  const name = quotedTzName(zone);
  return placeReading(local, (ts) => icuOffsetSql(ts, name));
}

/** `fromLocalSql` in a zone with transitions, its offset at an instant read by `offsetAt` */
function placeReading(local: string, offsetAt: (ts: string) => string): string {
  const a = offsetAt(`(${local} - INTERVAL 1 DAY)`);
  const placed = (offset: string) => `(${local} - to_seconds(${offset}))`;
  const landsOn = offsetAt(placed(a));
  return `(CASE WHEN ${landsOn} = ${a} THEN ${placed(a)} WHEN ${offsetAt(placed(landsOn))} = ${landsOn} THEN ${placed(landsOn)} ELSE ${placed(a)} END)`;
}

/** A zone argument: a string literal's text, or a parameter's SQL (core allows nothing else). */
export function zoneName(sql: string | undefined): DuckdbZone {
  if (sql === undefined) return "UTC";
  const m = /^'((?:[^']|'')*)'$/.exec(sql.trim());
  if (!m) return { sql };
  return m[1]!.replace(/''/g, "'");
}

const EXPLICIT_OFFSET = "'[T ]\\d{1,2}:\\d{1,2}(:\\d{1,2}(\\.\\d+)?)?\\s*([+-])(\\d{1,2})(:?(\\d{2}))?\\s*$'";

/**
 * BigQuery's canonical timestamp text → UTC TIMESTAMP: an explicit offset wins; otherwise the
 * text is a wall-clock time in `zone` (UTC by default).
 */
export function stringToTimestampSql(text: string, zone: DuckdbZone = "UTC", safe = false): string {
  return bindOnce(text, (s) => textToTimestampSql(s, zone, safe));
}

function textToTimestampSql(s: string, zone: DuckdbZone, safe: boolean): string {
  const cast = safe ? "TRY_CAST" : "CAST";
  // the offset only after a time: a date's own day ('2025-01-15') is not an offset of -15
  const bare = `regexp_replace(regexp_replace(${s}, '(\\d:\\d{1,2}(:\\d{1,2}(\\.\\d+)?)?)\\s*([+-]\\d{1,2}(:?\\d{2})?|Z|UTC)\\s*$', '\\1'), '[Tt]', ' ')`;
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
const DUCKDB_TEXT: FractionSqlOps = {
  text: (n) => `CAST(${n} AS VARCHAR)`,
  trimZeros: (t) => `rtrim(${t}, '0')`,
};

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
  // PARSE_TIMESTAMP reads every %E<n>S as %E*S (readingFormat)
  "E*S": "%S.%f",
};

/**
 * FORMAT_TIMESTAMP on DuckDB, piece by piece: strftime lacks several BigQuery elements (%e,
 * %s, and %z / %Z in a zone other than UTC).
 */
export function formatTimestampSql(format: string, instant: string, zone?: DuckdbZone): string {
  return bindOnce(instant, (ts) => formatted(format, ts, zone));
}

function formatted(format: string, ts: string, zone?: DuckdbZone): string {
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
    // %z is +HHMM, %Ez (RFC 3339) +HH:MM
    const offsetText = (colon: string) =>
      `(CASE WHEN ${offset} < 0 THEN '-' ELSE '+' END || lpad(CAST(abs(${offset}) // 3600 AS VARCHAR), 2, '0') || '${colon}' || lpad(CAST(abs(${offset}) % 3600 // 60 AS VARCHAR), 2, '0'))`;
    const special: Record<string, string> = {
      e: `lpad(CAST(day(${local}) AS VARCHAR), 2, ' ')`,
      k: `lpad(CAST(hour(${local}) AS VARCHAR), 2, ' ')`,
      l: `lpad(CAST((hour(${local}) + 11) % 12 + 1 AS VARCHAR), 2, ' ')`,
      u: `CAST(isodow(${local}) AS VARCHAR)`,
      s: `CAST(CAST(floor(epoch_us(${ts}) / 1000000) AS BIGINT) AS VARCHAR)`,
      z: offsetText(""),
      Ez: offsetText(":"),
      Z: typeof zone === "object" ? zone.sql : `'${(zone ?? "UTC").replace(/'/g, "''")}'`,
    };
    const digits = fractionDigits(p.element);
    if (digits !== undefined) {
      flush();
      pieces.push(
        secondsWithFractionSql(
          digits,
          `strftime(${local}, '%S')`,
          `(microsecond(${local}) % 1000000)`,
          DUCKDB_TEXT,
        ),
      );
    } else if (p.element in special) {
      flush();
      pieces.push(special[p.element]!);
    } else strf += STRFTIME[p.element];
  }
  flush();
  const sql = pieces.length === 0 ? "''" : pieces.length === 1 ? pieces[0]! : `(${pieces.join(" || ")})`;
  return nullForNullInstant(format, ts, sql);
}

// Whole units of an integer count of microseconds. `/` divides as DOUBLE, which holds no more than
// 2^53: 9999-12-31 23:59:59.999999 (253402300799999999 µs) is 253402300800 seconds there. The
// dividend is made an exact multiple first, so `//` has no remainder to round either way.

/** floor(`us` / `unit`): toward the past, also before 1970 (BigQuery's UNIX_SECONDS, UNIX_MILLIS) */
export function floorDivSql(us: string, unit: number): string {
  return `((${us} - ((${us} % ${unit}) + ${unit}) % ${unit}) // ${unit})`;
}

/** trunc(`us` / `unit`): toward zero (BigQuery's TIMESTAMP_DIFF) */
export function truncDivSql(us: string, unit: number): string {
  return `((${us} - ${us} % ${unit}) // ${unit})`;
}
