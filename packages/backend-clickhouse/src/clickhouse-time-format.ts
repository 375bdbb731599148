import {
  type FractionSqlOps,
  fractionDigits,
  nullForNullInstant,
  parseTimeFormat,
  QesError,
  secondsWithFractionSql,
} from "@qes/core";
import { bindOnce } from "./clickhouse-bind-once.ts";
import { sqlString } from "./clickhouse-sql.ts";
import { offsetSql, toLocalSql, type Zone } from "./clickhouse-time.ts";

/** BigQuery format elements that ClickHouse's formatDateTime (MySQL syntax) writes as they are. */
const FORMAT_DATETIME: Record<string, string> = {
  Y: "%Y",
  m: "%m",
  d: "%d",
  H: "%H",
  M: "%i",
  S: "%S",
  y: "%y",
  j: "%j",
  b: "%b",
  B: "%M",
  a: "%a",
  A: "%W",
  I: "%I",
  p: "%p",
  F: "%F",
  T: "%T",
  D: "%D",
  R: "%R",
  // PARSE_TIMESTAMP reads every %E<n>S as %E*S (readingFormat)
  "E*S": "%S.%f",
};

const CLICKHOUSE_TEXT: FractionSqlOps = {
  text: (n) => `toString(${n})`,
  trimZeros: (t) => `trimRight(${t}, '0')`,
};

/**
 * FORMAT_TIMESTAMP on ClickHouse, piece by piece: formatDateTime for most elements, expressions
 * for %e (space-padded day), %s (epoch seconds), %E3S (milliseconds), %z and %Z in the zone asked.
 */
/** `zoneText`: SQL of the zone as written, for %Z */
export function formatTimestampSql(format: string, instant: string, zone: Zone, zoneText: string): string {
  return bindOnce(instant, (ts) => formatted(format, ts, zone, zoneText));
}

function formatted(format: string, ts: string, zone: Zone, zoneText: string): string {
  const local = toLocalSql(ts, zone);
  const offset = offsetSql(ts, zone);
  const pieces: string[] = [];
  let pattern = "";
  const flush = () => {
    if (pattern) pieces.push(`formatDateTime(${local}, ${sqlString(pattern)}, 'UTC')`);
    pattern = "";
  };
  const micros = `((toUnixTimestamp64Micro(${ts}) % 1000000 + 1000000) % 1000000)`;
  for (const p of parseTimeFormat(format)) {
    if ("literal" in p) {
      pattern += p.literal.replace(/%/g, "%%");
      continue;
    }
    // %z is +HHMM, %Ez (RFC 3339) +HH:MM
    const offsetText = (colon: string) =>
      `concat(if(${offset} < 0, '-', '+'), leftPad(toString(intDiv(abs(${offset}), 3600)), 2, '0'), '${colon}', leftPad(toString(intDiv(abs(${offset}) % 3600, 60)), 2, '0'))`;
    const special: Record<string, string> = {
      e: `leftPad(toString(toDayOfMonth(${local})), 2, ' ')`,
      s: `toString(toInt64(floor(toUnixTimestamp64Micro(${ts}) / 1000000)))`,
      k: `leftPad(toString(toHour(${local})), 2, ' ')`,
      l: `leftPad(toString((toHour(${local}) + 11) % 12 + 1), 2, ' ')`,
      u: `toString(toDayOfWeek(${local}))`,
      z: offsetText(""),
      Ez: offsetText(":"),
      Z: zoneText,
    };
    const digits = fractionDigits(p.element);
    if (digits !== undefined) {
      flush();
      pieces.push(
        secondsWithFractionSql(digits, `formatDateTime(${local}, '%S', 'UTC')`, micros, CLICKHOUSE_TEXT),
      );
    } else if (p.element in special) {
      flush();
      pieces.push(special[p.element]!);
    } else pattern += FORMAT_DATETIME[p.element];
  }
  flush();
  const sql = pieces.length === 0 ? "''" : pieces.length === 1 ? pieces[0]! : `concat(${pieces.join(", ")})`;
  return nullForNullInstant(format, ts, sql);
}

/**
 * Composite elements as the elements they stand for: parseDateTime64's own %F, %T, %D, %R are
 * not BigQuery's, its %Y, %m, %H… read the same parts.
 */
const PARSE_COMPOSITES: Record<string, string> = { F: "%Y-%m-%d", T: "%H:%M:%S", D: "%m/%d/%y", R: "%H:%M" };

/** BigQuery format → parseDateTime64's MySQL-style format (PARSE_TIMESTAMP). */
export function translateParseFormat(format: string): string {
  return parseTimeFormat(format)
    .map((p): string => {
      if ("literal" in p) return p.literal.replace(/%/g, "%%");
      const composite = PARSE_COMPOSITES[p.element];
      if (composite) return translateParseFormat(composite);
      if (p.element === "S") return "%s";
      if (p.element === "E*S") return "%s.%f";
      if (p.element === "z") return "%z";
      if (p.element === "e") return "%e";
      const f = FORMAT_DATETIME[p.element];
      if (!f)
        throw new QesError("sql_invalid", `PARSE_TIMESTAMP does not support %${p.element} on ClickHouse.`);
      return f;
    })
    .join("");
}
