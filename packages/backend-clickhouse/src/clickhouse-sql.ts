/** Quoting for the SQL qes writes itself (DDL, storage); request values are never written here. */

/** An identifier in double quotes (ClickHouse reads `"name"` as an identifier). */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

/** A string literal: ClickHouse reads backslash escapes inside quotes. */
export function sqlString(text: string): string {
  return `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
}

/** `"database"."table"` */
export function qualified(database: string, table: string): string {
  return `${quoteIdent(database)}.${quoteIdent(table)}`;
}
