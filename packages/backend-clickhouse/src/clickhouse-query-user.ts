import { createHmac } from "node:crypto";
import type { ClickHouseClient } from "@clickhouse/client";
import { quoteIdent, sqlString } from "./clickhouse-sql.ts";
import type { StorageLayout } from "./clickhouse-storage.ts";

/**
 * The read-only query user of a server deployment (DESIGN.md §6, §12), as on PostgreSQL: a user
 * that may only SELECT the database's tables, whatever SQL reaches the server. Its settings
 * profile is `readonly = 2`: it can set per-query limits (each query's SETTINGS clause) but never
 * write, and no query can lift `readonly`. The embedded engine has no users: there every query
 * runs with `readonly = 1` in its SETTINGS (see the executor), and the sandbox stays the first
 * guard in both cases.
 */
export function queryUserFor(database: string): string {
  return `qes_reader_${database}`;
}

/** Derived from the owner's password so every instance computes the same one (no second secret). */
export function queryPasswordFor(ownerPassword: string, user: string): string {
  return createHmac("sha256", ownerPassword).update(`qes-reader:${user}`).digest("hex");
}

/** The query URL qes uses when `QES_CLICKHOUSE_QUERY_URL` is unset: the owner URL as the query user. */
export function queryUrlFor(ownerUrl: string, database: string): string {
  const url = new URL(ownerUrl);
  const user = queryUserFor(database);
  const ownerPassword = decodeURIComponent(url.password);
  url.username = encodeURIComponent(user);
  url.password = ownerPassword === "" ? "" : queryPasswordFor(ownerPassword, user);
  return url.toString();
}

/** The statements creating (idempotently) the query user of `layout.database`. */
export function queryUserSql(ownerUrl: string, layout: StorageLayout): string[] {
  const user = queryUserFor(layout.database);
  const ownerPassword = decodeURIComponent(new URL(ownerUrl).password);
  const cluster = layout.cluster === undefined ? "" : ` ON CLUSTER ${quoteIdent(layout.cluster)}`;
  const identified =
    ownerPassword === ""
      ? "IDENTIFIED WITH no_password"
      : `IDENTIFIED WITH sha256_password BY ${sqlString(queryPasswordFor(ownerPassword, user))}`;
  return [
    `CREATE USER IF NOT EXISTS ${quoteIdent(user)}${cluster} ${identified} SETTINGS readonly = 2`,
    `GRANT${cluster} SELECT ON ${quoteIdent(layout.database)}.* TO ${quoteIdent(user)}`,
  ];
}

/** Creates the query user; needs an owner with access management rights. */
export async function ensureQueryUser(
  client: ClickHouseClient,
  ownerUrl: string,
  layout: StorageLayout,
): Promise<void> {
  for (const sql of queryUserSql(ownerUrl, layout)) await client.command({ query: sql });
}
