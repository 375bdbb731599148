import { createHash } from "node:crypto";
import type pg from "pg";

/** The storage's function reading text as JSON, NULL when it is not JSON (migration 0002). */
export const JSON_OR_NULL = "qes_json_or_null";

/** `pg.Pool` and `pg.Client` alike. */
export type Queryable = pg.Pool | pg.ClientBase;

/** A quoted SQL identifier (`"a""b"`), for names qes chose or validated itself. */
export function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** `schema.table`, both quoted. */
export function qualified(schema: string, table: string): string {
  return `${ident(schema)}.${ident(table)}`;
}

/** A quoted SQL string literal (standard_conforming_strings is on since PostgreSQL 9.1). */
export function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * An advisory-lock key (int8, as decimal text) for a name: the first 8 bytes of its SHA-256, so
 * every process computes the same key without a registry of numbers.
 */
export function advisoryKey(name: string): string {
  return createHash("sha256").update(name).digest().readBigInt64BE(0).toString();
}
