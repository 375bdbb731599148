import { fixedZoneOffset } from "@qes/core";

/**
 * PostgreSQL reads a zone written as an offset in POSIX's sign (`+05:30` is west of UTC), BigQuery
 * in ISO's (east): an offset is written with its sign turned, a tz database name as it is.
 */
export function postgresZoneText(zone: string): string {
  const offset = fixedZoneOffset(zone);
  if (offset === undefined) return zone.trim();
  if (offset === 0) return "UTC";
  const abs = Math.abs(offset);
  const minutes = String(Math.floor((abs % 3600) / 60)).padStart(2, "0");
  return `${offset > 0 ? "-" : "+"}${Math.floor(abs / 3600)}:${minutes}`;
}

/**
 * A zone argument's SQL as PostgreSQL reads it: a literal rewritten by postgresZoneText, a
 * parameter (core allows nothing else) as it is, since it is bound through the same function.
 */
export function postgresZone(sql: string | undefined): string {
  if (sql === undefined) return "'UTC'";
  const m = /^'((?:[^']|'')*)'$/.exec(sql.trim());
  if (!m) return sql;
  return `'${postgresZoneText(m[1]!.replace(/''/g, "'")).replace(/'/g, "''")}'`;
}

/**
 * The instant of wall-clock time `local` (a timestamp) in `zone` (postgresZone's SQL). A reading
 * a DST transition skips or repeats takes the offset in effect before it, as on BigQuery
 * (docs/compiler.md "Wall-clock readings"). `AT TIME ZONE` does so for a skipped reading but
 * takes the later of a repeated one: the reading placed with the offset of a day before (`early`,
 * before any transition near) wins whenever it reads back as `local`.
 */
export function postgresFromLocal(local: string, zone: string): string {
  if (zone === "'UTC'") return `(${local} AT TIME ZONE 'UTC')`;
  const early = `(((${local}) - INTERVAL '24 hours') AT TIME ZONE ${zone} + INTERVAL '24 hours')`;
  return `(CASE WHEN (${early} AT TIME ZONE ${zone}) = ${local} THEN ${early} ELSE (${local} AT TIME ZONE ${zone}) END)`;
}
