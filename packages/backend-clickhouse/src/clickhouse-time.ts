import { fixedZoneOffset, zoneRules } from "@qes/core";
import { bindOnce } from "./clickhouse-bind-once.ts";
import { raisingTimestamp } from "./clickhouse-casts.ts";
import { sqlString } from "./clickhouse-sql.ts";

/**
 * Time zones on ClickHouse: named zones use the engine's own tz database; fixed offsets
 * (`+05:30`, `UTC-3`), which ClickHouse does not read as zones, are plain arithmetic. Timestamps
 * are DateTime64(6, 'UTC'); a local (DATETIME) value is the wall-clock reading labelled UTC.
 */
export type Zone = { utc: true } | { offsetSeconds: number } | { name: string; sql: string };

const FIXED = /^(?:UTC|Z|Etc\/UTC|GMT|Etc\/GMT)?\s*(?:[+-]\d{1,2}(?::?\d{2})?)?$/i;

/**
 * A zone argument. ClickHouse's time functions need a constant zone: a literal is resolved here,
 * a parameter (core allows nothing else) is a query parameter, a constant, bound as a zone
 * ClickHouse knows (`bindClickhouseZone`); its `name` is the SQL of the text as sent.
 */
export function zoneOf(sql: string | undefined): Zone {
  if (sql === undefined) return { utc: true };
  const m = /^'((?:[^'\\]|\\.)*)'$/.exec(sql.trim());
  if (!m) return { name: sql, sql: `assumeNotNull(${sql})` };
  const name = m[1]!.replace(/\\(.)/g, "$1");
  const rules = zoneRules(name); // refuses unknown zones
  if (FIXED.test(name.trim())) {
    const offset = rules.offsets[0] ?? 0;
    return offset === 0 ? { utc: true } : { offsetSeconds: offset };
  }
  return { name: sqlString(name), sql: sqlString(name) };
}

/**
 * A time-zone parameter's value as ClickHouse reads zones: a tz database name as it is, an offset
 * (which ClickHouse does not read as a zone) as the fixed zone `Fixed/UTC+05:30:00`.
 */
export function bindClickhouseZone(zone: string): string {
  const offset = fixedZoneOffset(zone);
  if (offset === undefined) return zone.trim();
  if (offset === 0) return "UTC";
  const abs = Math.abs(offset);
  const two = (n: number) => String(n).padStart(2, "0");
  return `Fixed/UTC${offset < 0 ? "-" : "+"}${two(Math.floor(abs / 3600))}:${two(Math.floor((abs % 3600) / 60))}:00`;
}

/** Seconds east of UTC in `zone` at the UTC instant `ts`. */
export function offsetSql(ts: string, zone: Zone): string {
  if ("utc" in zone) return "0";
  if ("offsetSeconds" in zone) return String(zone.offsetSeconds);
  return `timeZoneOffset(toTimeZone(${ts}, ${zone.sql}))`;
}

/** The wall-clock reading in `zone` of the UTC instant `ts`, as a UTC-labelled DateTime64. */
export function toLocalSql(ts: string, zone: Zone): string {
  if ("utc" in zone) return ts;
  return bindOnce(ts, (t) => `addSeconds(${t}, ${offsetSql(t, zone)})`);
}

/**
 * The UTC instant of the wall-clock reading `local` in `zone`. A reading a DST transition skips
 * or repeats takes the offset in effect before it, as on BigQuery (docs/compiler.md "Wall-clock
 * readings"; ClickHouse's own reading of a zone's text takes the one after for a skipped one).
 * `a` is the offset a day before (before any transition near): the reading placed with it is kept
 * when it holds that offset (before a transition, or the earlier of a repeated reading); else it
 * is placed with the offset it landed on (after), unless that fails too (skipped: `a` again). From
 * offsets, not text: parsing text throws on the placeholder value of a NULL row.
 */
export function fromLocalSql(local: string, zone: Zone): string {
  if ("utc" in zone) return local;
  if ("offsetSeconds" in zone) return `subtractSeconds(${local}, ${zone.offsetSeconds})`;
  return bindOnce(local, (l) => placedInZone(l, zone));
}

function placedInZone(local: string, zone: Zone): string {
  const placed = (offset: string) => `subtractSeconds(${local}, ${offset})`;
  const a = offsetSql(`subtractDays(${local}, 1)`, zone);
  const landsOn = offsetSql(placed(a), zone);
  return `multiIf(${landsOn} = ${a}, ${placed(a)}, ${offsetSql(placed(landsOn), zone)} = ${landsOn}, ${placed(landsOn)}, ${placed(a)})`;
}

/** Text with an explicit offset (or Z / UTC) at its end. */
/** an offset after a time: a date's own day ('2025-01-15') is not an offset of -15 */
const EXPLICIT_OFFSET =
  "'[0-9]:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?(\\\\s*(Z|z|UTC|[+-][0-9]{1,2}(:?[0-9]{2})?))\\\\s*$'";

/** BigQuery's timestamp text → TIMESTAMP: an explicit offset wins, else the text is local to `zone`. */
export function textToTimestampSql(text: string, zone: Zone, orNull = false): string {
  return bindOnce(text, (s) => timestampOfText(s, zone, orNull));
}

function timestampOfText(s: string, zone: Zone, orNull: boolean): string {
  const parse = (tz: string) =>
    orNull ? `parseDateTime64BestEffortOrNull(${s}, 6, ${tz})` : raisingTimestamp(s, tz);
  if ("utc" in zone) return parse("'UTC'");
  // not parse(zone): ClickHouse places a reading a DST transition skips with the offset after it
  return `if(match(${s}, ${EXPLICIT_OFFSET}), ${parse("'UTC'")}, ${fromLocalSql(parse("'UTC'"), zone)})`;
}
