import { newSourceSchema, type SchemaChange } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newSourceTable } from "../src/clickhouse-loader.ts";
import { schemaTableSql } from "../src/clickhouse-schema-store.ts";
import { dataTable } from "../src/clickhouse-storage.ts";
import {
  createClickhouseBackend,
  createSourceSql,
  dropSourceSql,
  queryUserSql,
  type StorageLayout,
  schemaChangeSql,
  ttlSql,
} from "../src/index.ts";
import { chdbTestPath, handQuery, uniqueDatabase } from "./helpers.ts";

/**
 * A cluster cannot run on this machine: the DDL qes emits for one (QES_CLICKHOUSE_CLUSTER) is
 * checked by the engine's own parser, formatQuery(), which parses any statement without running it.
 */
const backend = createClickhouseBackend({ path: chdbTestPath(), database: uniqueDatabase() });
beforeAll(() => backend.init());
afterAll(() => backend.close());

async function parsed(sql: string): Promise<string> {
  const r = await backend.execute(
    handQuery("SELECT formatQuery(assumeNotNull({p1:Nullable(String)})) AS f", [
      { name: "f", type: { kind: "scalar", type: "STRING" } },
    ]),
    [sql],
    { maxRows: 1, timeoutMs: 10_000 },
  );
  return r.rows[0]!.f as string;
}

const cluster: StorageLayout = { database: "qes", cluster: "logs" };

function clusterStatements(): string[] {
  const source = newSourceSchema("cloudflare.logs.prod");
  source.fields.metadata = { name: "metadata", kind: "record", column: "f1", fields: {} };
  source.fields.metadata.fields!.status = { name: "status", kind: "scalar", type: "INT64", column: "f2" };
  const changes: SchemaChange[] = [
    { op: "add_column", path: ["metadata", "method"], column: "f3", type: "STRING" },
    { op: "alter_column", path: ["metadata", "status"], column: "f2", from: "INT64", to: "STRING" },
    { op: "drop_column", path: ["metadata", "x"], column: "f4" },
    { op: "alter_column", path: ["n"], column: "f5", from: "FLOAT64", to: "STRING" },
    { op: "alter_column", path: ["metadata", "latency"], column: "f6", from: "FLOAT64", to: "STRING" },
    {
      op: "add_column",
      path: ["metadata", "req"],
      column: "f7",
      type: "JSON",
      backfill: { column: "f1", path: ["req"], wrap: true },
    },
    { op: "wrap_in_array", path: ["metadata"], column: "f1" },
  ];
  return [
    schemaTableSql(cluster),
    ...createSourceSql(cluster, source, 30),
    ...changes.flatMap((c) => schemaChangeSql(cluster, source, c)),
    ttlSql(cluster, source.table, 7),
    ttlSql(cluster, source.table, 0),
    ...dropSourceSql(cluster, source.table),
    ...queryUserSql("http://qes:secret@ch-1:8123/qes", cluster),
  ];
}

describe("cluster DDL (QES_CLICKHOUSE_CLUSTER)", () => {
  it("every statement parses in ClickHouse and runs ON CLUSTER", async () => {
    for (const sql of clusterStatements()) {
      const formatted = await parsed(sql);
      expect(formatted, sql).toMatch(/ON CLUSTER logs/);
    }
  });

  it("a source is a ReplicatedMergeTree per node under one Distributed table, sharded by id", async () => {
    const [local, distributed] = createSourceSql(cluster, newSourceSchema("postgres.logs"), 30).map((s) => s);
    expect(await parsed(local!)).toMatch(
      /CREATE TABLE IF NOT EXISTS qes\.src_postgres_logs_local ON CLUSTER logs[\s\S]*ENGINE = ReplicatedMergeTree\('\/clickhouse\/tables\/\{shard\}\/qes\/src_postgres_logs_local', '\{replica\}'\)[\s\S]*PARTITION BY toDate32\(timestamp\)[\s\S]*ORDER BY \(project, timestamp\)[\s\S]*TTL toDateTime\(greatest\(least\(toDate32\(timestamp\)[\s\S]*\+ 31, 'UTC'\)/,
    );
    expect(await parsed(distributed!)).toMatch(
      /CREATE TABLE IF NOT EXISTS qes\.src_postgres_logs ON CLUSTER logs AS qes\.src_postgres_logs_local\s+ENGINE = Distributed\('logs', 'qes', 'src_postgres_logs_local', cityHash64\(id\)\)/,
    );
  });

  it("no source's table is another's local table (`x` is src_x and src_x_local; `x local` must be neither)", () => {
    for (const [first, second] of [
      ["x", "x local"],
      ["x local", "x"],
    ] as const) {
      const one = newSourceTable(cluster, { version: 1, sources: {} }, first);
      const other = newSourceTable(cluster, { version: 1, sources: { [first]: one } }, second);
      const names = (t: string) => [t, dataTable(cluster, t)];
      expect(
        names(other.table).filter((n) => names(one.table).includes(n)),
        `${first}, then ${second}`,
      ).toEqual([]);
    }
    // without a cluster there is no local table: each keeps its own plain name
    const plain = { database: "qes" };
    const x = newSourceTable(plain, { version: 1, sources: {} }, "x");
    expect(newSourceTable(plain, { version: 1, sources: { x } }, "x local").table).toBe("src_x_local");
  });

  it("a malformed statement is refused by the same check (the check can fail)", async () => {
    await expect(parsed("CREATE TABLE qes.t ON CLUSTER (")).rejects.toMatchObject({ code: "sql_invalid" });
  });

  it("without a cluster the DDL is a plain MergeTree and names no cluster", async () => {
    const [plain, ...rest] = createSourceSql({ database: "qes" }, newSourceSchema("postgres.logs"), 0);
    expect(rest).toEqual([]);
    const formatted = await parsed(plain!);
    expect(formatted).toMatch(
      /ENGINE = MergeTree\s+PARTITION BY toDate32\(timestamp\)\s+ORDER BY \(project, timestamp\)/,
    );
    expect(formatted).not.toMatch(/CLUSTER|TTL/);
  });
});
