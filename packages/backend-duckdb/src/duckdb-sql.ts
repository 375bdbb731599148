/** DuckDB identifiers and string literals in SQL text (names the service chose, never request values). */

export function quoteIdent(name: string): string {
  return '"' + name.replaceAll('"', '""') + '"';
}

export function sqlString(text: string): string {
  return "'" + text.replaceAll("'", "''") + "'";
}
