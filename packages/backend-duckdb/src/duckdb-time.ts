import { QesError, zoneRules } from "@qes/core";

/**
 * Time zones and timestamp text on DuckDB, which has no ICU extension here (no network to load
 * it): zone offsets come from tables built at compile time from the runtime's tz database.
 * Timestamps are naive UTC values (TIMESTAMP); a local time is the UTC value shifted.
 */

/** Seconds east of UTC in `zone` at the UTC instant `ts`. */
export function zoneOffsetSql(ts: string, zone: string): string {
  const rules = zoneRules(zone);
  if (rules.transitions.length === 0) return `CAST(${rules.offsets[0]} AS BIGINT)`;
  const transitions = `[${rules.transitions.map((t) => `${t}::BIGINT`).join(", ")}]`;
  const offsets = `[${rules.offsets.join(", ")}]`;
  return `list_extract(${offsets}, len(list_filter(${transitions}, x -> x <= epoch_us(${ts}))) + 1)`;
}

/** The wall-clock time in `zone` of UTC instant `ts`. */
export function toLocalSql(ts: string, zone: string): string {
  return `(${ts} + to_seconds(${zoneOffsetSql(ts, zone)}))`;
}

/** The UTC instant of wall-clock time `local` in `zone` (the earlier one at a DST overlap). */
export function fromLocalSql(local: string, zone: string): string {
  const guess = `(${local} - to_seconds(${zoneOffsetSql(local, zone)}))`;
  return `(${local} - to_seconds(${zoneOffsetSql(guess, zone)}))`;
}

/** A string literal's text as a zone name; zones must be known at compile time here. */
export function zoneName(sql: string | undefined): string {
  if (sql === undefined) return "UTC";
  const m = /^'((?:[^']|'')*)'$/.exec(sql.trim());
  if (!m) throw new QesError("sql_invalid", "On the DuckDB backend a time zone must be a string literal.");
  return m[1]!.replace(/''/g, "'");
}

const EXPLICIT_OFFSET = "'[T ]\\d{1,2}:\\d{2}(:\\d{2}(\\.\\d+)?)?\\s*([+-])(\\d{1,2})(:?(\\d{2}))?\\s*$'";

/**
 * BigQuery's canonical timestamp text → UTC TIMESTAMP: an explicit offset wins; otherwise the
 * text is a wall-clock time in `zone` (UTC by default).
 */
export function stringToTimestampSql(s: string, zone = "UTC", safe = false): string {
  const cast = safe ? "TRY_CAST" : "CAST";
  const bare = `regexp_replace(regexp_replace(${s}, '\\s*([+-]\\d{1,2}(:?\\d{2})?|Z|UTC)\\s*$', ''), '[Tt]', ' ')`;
  const sign = `CASE regexp_extract(${s}, ${EXPLICIT_OFFSET}, 3) WHEN '-' THEN -1 ELSE 1 END`;
  const hours = `CAST(regexp_extract(${s}, ${EXPLICIT_OFFSET}, 4) AS BIGINT)`;
  const minutes = `coalesce(TRY_CAST(regexp_extract(${s}, ${EXPLICIT_OFFSET}, 6) AS BIGINT), 0)`;
  const local = `${cast}(${bare} AS TIMESTAMP)`;
  const inZone =
    zoneRules(zone).transitions.length === 0 && zoneRules(zone).offsets[0] === 0
      ? local
      : fromLocalSql(local, zone);
  return `CASE WHEN regexp_matches(${s}, ${EXPLICIT_OFFSET}) THEN ${local} - to_seconds(${sign} * (${hours} * 3600 + ${minutes} * 60)) WHEN regexp_matches(${s}, '(Z|UTC)\\s*$') THEN ${local} ELSE ${inZone} END`;
}

/**
 * FORMAT_TIMESTAMP / FORMAT_DATETIME on DuckDB: BigQuery format elements, piece by piece, since
 * strftime lacks several (%F, %T, %e, %s, %E…S, %z in a zone).
 */
export function formatTimestampSql(format: string, ts: string, zone?: string): string {
  const local = zone ? toLocalSql(ts, zone) : ts;
  const offset = zone ? zoneOffsetSql(ts, zone) : "CAST(0 AS BIGINT)";
  const pieces: string[] = [];
  let strf = "";
  const flush = () => {
    if (strf) pieces.push(`strftime(${local}, '${strf.replace(/'/g, "''")}')`);
    strf = "";
  };
  const expr = (sql: string) => {
    flush();
    pieces.push(sql);
  };
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c !== "%") {
      strf += c === "%" ? "%%" : c;
      continue;
    }
    const n = format[i + 1];
    i++;
    switch (n) {
      case "Y":
      case "m":
      case "d":
      case "H":
      case "M":
      case "S":
      case "y":
      case "j":
      case "b":
      case "B":
      case "a":
      case "A":
      case "I":
      case "p":
        strf += `%${n}`;
        break;
      case "F":
        strf += "%Y-%m-%d";
        break;
      case "T":
        strf += "%H:%M:%S";
        break;
      case "D":
        strf += "%m/%d/%y";
        break;
      case "R":
        strf += "%H:%M";
        break;
      case "%":
        strf += "%%";
        break;
      case "e":
        expr(`lpad(CAST(day(${local}) AS VARCHAR), 2, ' ')`);
        break;
      case "s":
        expr(`CAST(CAST(floor(epoch_us(${ts}) / 1000000) AS BIGINT) AS VARCHAR)`);
        break;
      case "z":
        expr(
          `(CASE WHEN ${offset} < 0 THEN '-' ELSE '+' END || lpad(CAST(abs(${offset}) // 3600 AS VARCHAR), 2, '0') || lpad(CAST(abs(${offset}) % 3600 // 60 AS VARCHAR), 2, '0'))`,
        );
        break;
      case "Z":
        expr(`'${(zone ?? "UTC").replace(/'/g, "''")}'`);
        break;
      case "E": {
        const spec = format.slice(i + 1, i + 3);
        i += 2;
        if (spec === "*S" || spec === "6S") strf += "%S.%f";
        else if (spec === "3S") strf += "%S.%g";
        else throw new QesError("sql_invalid", `Format element %E${spec} is not supported.`);
        break;
      }
      default:
        throw new QesError("sql_invalid", `Format element %${n ?? ""} is not supported.`);
    }
  }
  flush();
  return pieces.length === 0 ? "''" : pieces.length === 1 ? pieces[0]! : `(${pieces.join(" || ")})`;
}
