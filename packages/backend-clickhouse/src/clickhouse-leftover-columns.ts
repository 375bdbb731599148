import type { ClickHouseClient } from "@clickhouse/client";
import { type LogSchema, physicalColumns } from "@qes/core";
import { MUTATION_SETTINGS } from "./clickhouse-loader.ts";
import { qualified, quoteIdent } from "./clickhouse-sql.ts";
import { columnDeclaration, dataTable, type StorageLayout } from "./clickhouse-storage.ts";

/**
 * Columns of the sources' tables that the stored schema does not know, or knows with another
 * type, left by a process killed while it widened a source: its `ADD COLUMN` or `MODIFY COLUMN`
 * had run, the new schema was not stored yet. Every
 * later commit to the source then failed (`Tables have different structure` at the attach, its
 * staging table made from the schema), a 500 for each request until the very request that was cut
 * short came again; and the next new field took the column's name, of another type maybe.
 *
 * No row of a commit that stored its schema has a value there (rows move in only after it,
 * clickhouse-loader.ts), so a column holding none is dropped, and a retyped one is converted back
 * to the schema's type. A new column holding values (a widening that rewrote stored rows into
 * it), or one that does not convert back, is kept and reported: dropping it could lose them.
 * Only for a store no other process writes (embedded chDB): on a server, another instance may be
 * between its `ADD COLUMN` and its schema.
 */
export async function dropLeftoverColumns(
  client: ClickHouseClient,
  layout: StorageLayout,
  schema: LogSchema,
): Promise<string[]> {
  const warnings: string[] = [];
  const sources = Object.values(schema.sources);
  const rs = await client.query({
    query:
      "SELECT table, name, type FROM system.columns WHERE database = {db:String} AND table IN {tables:Array(String)}",
    query_params: { db: layout.database, tables: sources.map((s) => dataTable(layout, s.table)) },
    format: "JSONEachRow",
  });
  const columns = await rs.json<{ table: string; name: string; type: string }>();
  for (const source of sources) {
    const table = dataTable(layout, source.table);
    const t = qualified(layout.database, table);
    const declared = new Map(
      physicalColumns(source).map((c) => [c.column, columnDeclaration(c.column, c.type)]),
    );
    for (const column of columns.filter((c) => c.table === table && declared.has(c.name))) {
      const type = declared.get(column.name) as string;
      if (column.type === type) continue;
      // retyped by the widening cut short: no row came since (rows move in after the schema), so
      // the values are the old type's, converted; converted back they are what they were
      try {
        await client.command({
          query: `ALTER TABLE ${t} MODIFY COLUMN ${quoteIdent(column.name)} ${type}`,
          clickhouse_settings: MUTATION_SETTINGS,
        });
      } catch (e) {
        warnings.push(
          `source "${source.name}": column ${column.name} of table ${table} is ${column.type}, its stored schema says ` +
            `${type} (a widening cut short by a crash), and it cannot be converted back: ${String(e).slice(0, 200)}`,
        );
      }
    }
    for (const column of columns.filter((c) => c.table === table && !declared.has(c.name))) {
      const col = quoteIdent(column.name);
      const held = column.type.startsWith("Array(") ? `notEmpty(${col})` : `${col} IS NOT NULL`;
      const count = await client.query({
        query: `SELECT toString(count()) AS n FROM ${t} WHERE ${held}`,
        format: "JSONEachRow",
      });
      const [{ n } = { n: "0" }] = await count.json<{ n: string }>();
      if (n === "0") {
        await client.command({
          query: `ALTER TABLE ${t} DROP COLUMN IF EXISTS ${col}`,
          clickhouse_settings: MUTATION_SETTINGS,
        });
      } else {
        warnings.push(
          `source "${source.name}": column ${column.name} of table ${table} is not in the stored schema and holds ` +
            `${n} values (a widening cut short by a crash); ingest into the source fails until it is resolved`,
        );
      }
    }
  }
  return warnings;
}
