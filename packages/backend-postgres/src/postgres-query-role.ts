import { createHmac } from "node:crypto";
import { QesError } from "@qes/core";
import type pg from "pg";
import type { ResolvedPostgresConfig } from "./postgres-config.ts";
import { advisoryKey, ident, type Queryable } from "./postgres-sql.ts";

/**
 * The query role (DESIGN.md §6): a login role that may only SELECT the log tables, so execution
 * is read-only by construction whatever SQL reaches the server. Roles are cluster-wide, so the
 * schema names the role (`qes_reader_<schema>`); it is created idempotently under an advisory
 * lock by an owner connection that has CREATEROLE (or is superuser). Without those rights the
 * operator creates the role (see `readerSetupSql`) or points QES_POSTGRES_QUERY_URL at one.
 */

/**
 * The password of a managed reader role, derived from the owner's password so every instance
 * that shares the owner URL computes the same one and no second secret has to be distributed.
 */
export function readerPasswordFor(ownerPassword: string, role: string): string {
  return createHmac("sha256", ownerPassword).update(`qes-reader:${role}`).digest("hex");
}

/** SQL an administrator runs when the owner connection may not create roles. */
export function readerSetupSql(config: ResolvedPostgresConfig): string {
  const password = config.readerPassword === null ? "" : ` PASSWORD '${config.readerPassword}'`;
  return (
    `CREATE ROLE ${ident(config.readerRole)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT ` +
    `NOREPLICATION NOBYPASSRLS${password}; ` +
    `ALTER ROLE ${ident(config.readerRole)} SET default_transaction_read_only = on;`
  );
}

interface OwnerRights {
  superuser: boolean;
  createRole: boolean;
}

async function ownerRights(client: pg.ClientBase): Promise<OwnerRights> {
  const { rows } = await client.query<{ rolsuper: boolean; rolcreaterole: boolean }>(
    "select rolsuper, rolcreaterole from pg_roles where rolname = current_user",
  );
  return { superuser: rows[0]?.rolsuper === true, createRole: rows[0]?.rolcreaterole === true };
}

async function roleExists(client: pg.ClientBase, role: string): Promise<boolean> {
  const { rowCount } = await client.query("select 1 from pg_roles where rolname = $1", [role]);
  return (rowCount ?? 0) > 0;
}

/** `tuple concurrently updated` (XX000) or a duplicate: another database's instance got there first. */
function isRoleRace(e: unknown): boolean {
  const code = (e as { code?: string }).code;
  return code === "42710" || code === "23505" || code === "XX000";
}

/**
 * Creates the managed reader role when missing and (re)asserts its attributes and password.
 * Serialised per database by an advisory lock; across databases (advisory locks are per
 * database, roles are not) a lost race is recognised and retried.
 */
export async function ensureReaderRole(client: pg.ClientBase, config: ResolvedPostgresConfig): Promise<void> {
  if (!config.managesReaderRole) return checkGivenReader(client, config);
  const role = ident(config.readerRole);
  const rights = await ownerRights(client);
  const canManage = rights.superuser || rights.createRole;
  const password = config.readerPassword === null ? "" : ` PASSWORD '${config.readerPassword}'`;
  await client.query("select pg_advisory_lock($1::bigint)", [advisoryKey("qes:roles")]);
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        if (!(await roleExists(client, config.readerRole))) {
          if (!canManage) {
            throw new QesError(
              "invalid_config",
              `the query role ${config.readerRole} does not exist and the QES_POSTGRES_URL user may not create ` +
                `roles (needs CREATEROLE). Ask an administrator to run: ${readerSetupSql(config)} ` +
                `or set QES_POSTGRES_QUERY_URL to a role that may only SELECT.`,
            );
          }
          await client.query(
            `create role ${role} login nosuperuser nocreatedb nocreaterole noinherit noreplication nobypassrls${password}`,
          );
        } else if (canManage) {
          await client.query(
            `alter role ${role} login nosuperuser nocreatedb nocreaterole noinherit noreplication nobypassrls${password}`,
          );
        }
        if (canManage) {
          // a raw login as this role starts every transaction read-only too
          await client.query(`alter role ${role} set default_transaction_read_only = on`);
        }
        return;
      } catch (e) {
        if (attempt < 3 && isRoleRace(e)) continue;
        throw e;
      }
    }
  } finally {
    await client.query("select pg_advisory_unlock($1::bigint)", [advisoryKey("qes:roles")]);
  }
}

/**
 * A query role the operator chose (QES_POSTGRES_QUERY_URL) must exist and be weaker than the
 * owner: qes grants it SELECT, but cannot take rights away from it.
 */
async function checkGivenReader(client: pg.ClientBase, config: ResolvedPostgresConfig): Promise<void> {
  const { rows } = await client.query<{ rolsuper: boolean; owner: boolean }>(
    "select rolsuper, rolname = current_user as owner from pg_roles where rolname = $1",
    [config.readerRole],
  );
  const role = rows[0];
  if (role === undefined) {
    throw new QesError(
      "invalid_config",
      `QES_POSTGRES_QUERY_URL names the role ${config.readerRole}, which does not exist`,
    );
  }
  if (role.rolsuper || role.owner) {
    throw new QesError(
      "invalid_config",
      `QES_POSTGRES_QUERY_URL must log in as a role that may only SELECT; ${config.readerRole} is ` +
        (role.owner ? "the owner (QES_POSTGRES_URL's user)" : "a superuser"),
    );
  }
}

/** Lets the reader see the schema; call once per start-up (idempotent). */
export async function grantSchemaUsage(client: pg.ClientBase, config: ResolvedPostgresConfig): Promise<void> {
  await client.query(`grant usage on schema ${ident(config.schema)} to ${ident(config.readerRole)}`);
  const { rows } = await client.query<{ ok: boolean }>(
    "select has_database_privilege($1, current_database(), 'CONNECT') as ok",
    [config.readerRole],
  );
  if (rows[0]?.ok !== true) {
    await client.query(
      `grant connect on database ${ident(await currentDatabase(client))} to ${ident(config.readerRole)}`,
    );
  }
}

async function currentDatabase(client: pg.ClientBase): Promise<string> {
  const { rows } = await client.query<{ db: string }>("select current_database() as db");
  return rows[0]!.db;
}

/** SELECT on one log table: the only privilege the reader gets on it. */
export async function grantSelect(
  client: Queryable,
  config: ResolvedPostgresConfig,
  table: string,
): Promise<void> {
  await client.query(
    `grant select on table ${ident(config.schema)}.${ident(table)} to ${ident(config.readerRole)}`,
  );
}
