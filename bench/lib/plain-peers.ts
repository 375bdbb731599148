import { fork } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import pg from "pg";
import { BENCH_POSTGRES_URL } from "./bench-backends.ts";
import { BENCH_DIR, readLines } from "./data.ts";

/**
 * The plain peers: the same events stored the way a user of the engine would store them without
 * qes, each engine's own bulk path. DuckDB: `CREATE TABLE … AS SELECT * FROM read_json_auto(file)`.
 * PostgreSQL: the reference platform's layout `(id, timestamp, event_message, body jsonb)`, filled
 * by COPY (the whole event in `body`), with a BRIN index on `timestamp` as that platform has.
 *
 * Each peer comes in two row orders. "file": the generator's order, which is not time order
 * (events of the last days are interleaved at random), as the issue measured. "time": the same
 * rows sorted by timestamp, the order they would have arrived in; a BRIN index on timestamp (and
 * DuckDB's row-group min/max) only prune in this order, so it is the stronger, fairer peer for
 * windowed queries.
 */
export type PeerOrder = "file" | "time";

/**
 * the reference platform's PostgreSQL table for one source's events: Logflare's PostgreSQL
 * adaptor creates it with `id` as its primary key (`add(:id, :string, primary_key: true)` in its
 * AddLogEvents migration), the index that keeps a retried event from being stored twice.
 */
export const PLAIN_REF_COLUMNS =
  '(id text primary key, "timestamp" timestamptz, event_message text, body jsonb)';

/** `CREATE TABLE <table> AS SELECT * FROM read_json_auto(file)`: DuckDB infers types and structs */
export async function duckdbPlainTable(conn: DuckDBConnection, table: string, file: string): Promise<void> {
  await conn.run(`CREATE TABLE ${table} AS SELECT * FROM read_json_auto('${resolve(file)}')`);
}

/** COPY text escaping of one field */
function copyField(text: string): string {
  return text.replace(/[\\\t\n\r]/g, (c) => ({ "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" })[c]!);
}

/** one event line as a COPY text row of PLAIN_REF_COLUMNS */
export function plainCopyRow(line: string): string {
  const e = JSON.parse(line) as { id: string; timestamp: string; event_message: string };
  return `${copyField(e.id)}\t${e.timestamp}\t${copyField(e.event_message)}\t${copyField(line)}\n`;
}

/** COPYs rows (COPY text, one per string) into a table, 1,000 rows per write, with backpressure */
export async function copyRows(
  client: pg.Client,
  table: string,
  rows: Iterable<string> | AsyncIterable<string>,
): Promise<void> {
  const { from: copyFrom } = await import("pg-copy-streams");
  const stream = client.query(copyFrom(`copy ${table} from stdin`));
  const done = new Promise<void>((res, rej) => {
    stream.on("finish", () => res());
    stream.on("error", rej);
  });
  let chunk: string[] = [];
  const flush = async () => {
    if (!stream.write(chunk.join(""))) await new Promise((r) => stream.once("drain", r));
    chunk = [];
  };
  for await (const row of rows) {
    chunk.push(row);
    if (chunk.length >= 1000) await flush();
  }
  if (chunk.length > 0) await flush();
  stream.end();
  await done;
}

/** the schema the PostgreSQL peers live in (prefixed so they never meet qes's own schemas) */
export const PLAIN_PG_SCHEMA = "peers_plain";

export interface PlainDuckdb {
  conn: DuckDBConnection;
  /** the table of each row order */
  tables: Record<PeerOrder, string>;
  /** seconds the load took, or null when an earlier run's file was reused */
  loadSeconds: number | null;
  close(): void;
}

/**
 * The DuckDB peer of an events file: its own database file under .tmp/bench (tables `edge` and
 * `edge_by_time`), kept and reused while a marker says it holds that file. Two threads, as the
 * qes server has.
 */
export async function openPlainDuckdb(file: string): Promise<PlainDuckdb> {
  const tag = basename(file);
  const path = join(BENCH_DIR, `plain-${tag.replace(/\.ndjson$/, "")}.duckdb`);
  const marker = `${path}.loaded`;
  const reuse = existsSync(marker) && readFileSync(marker, "utf8") === tag;
  if (!reuse) {
    rmSync(marker, { force: true });
    rmSync(path, { force: true });
    rmSync(`${path}.wal`, { force: true });
  }
  const instance = await DuckDBInstance.create(path, { threads: "2" });
  const conn = await instance.connect();
  let loadSeconds: number | null = null;
  if (!reuse) {
    const t = performance.now();
    await duckdbPlainTable(conn, "edge", file);
    await conn.run("CHECKPOINT");
    loadSeconds = (performance.now() - t) / 1000;
    writeFileSync(marker, tag);
  }
  // a CTAS is atomic: the table exists whole or not at all
  await conn.run(`CREATE TABLE IF NOT EXISTS edge_by_time AS SELECT * FROM edge ORDER BY "timestamp"`);
  return {
    conn,
    tables: { file: "edge", time: "edge_by_time" },
    loadSeconds,
    close: () => {
      conn.closeSync();
      instance.closeSync();
    },
  };
}

export interface PlainPostgres {
  client: pg.Client;
  /** the qualified table name of each row order */
  tables: Record<PeerOrder, string>;
  loadSeconds: number | null;
  close(): Promise<void>;
}

/**
 * The PostgreSQL peer of an events file: tables `peers_plain."<file>"` (COPY order) and
 * `peers_plain."<file>_by_time"`, each with a BRIN index on `timestamp`, analyzed. A table's
 * comment names the file once it is complete, so an interrupted load is never reused.
 */
export async function openPlainPostgres(
  file: string,
  opts: { timeOrder?: boolean } = {},
): Promise<PlainPostgres> {
  const tag = basename(file);
  const name = tag.replace(/\.ndjson$/, "").replace(/[^A-Za-z0-9]+/g, "_");
  const table = `${PLAIN_PG_SCHEMA}."${name}"`;
  const byTime = `${PLAIN_PG_SCHEMA}."${name}_by_time"`;
  const client = new pg.Client({ connectionString: BENCH_POSTGRES_URL });
  await client.connect();
  const complete = async (t: string) =>
    (await client.query("select obj_description(to_regclass($1), 'pg_class') as tag", [t])).rows[0]?.tag ===
    tag;
  const finish = async (t: string) => {
    await client.query(`create index on ${t} using brin ("timestamp")`);
    await client.query(`analyze ${t}`);
    await client.query(`comment on table ${t} is '${tag}'`);
  };
  let loadSeconds: number | null = null;
  if (!(await complete(table))) {
    const t = performance.now();
    await client.query(`create schema if not exists ${PLAIN_PG_SCHEMA}`);
    await client.query(`drop table if exists ${table}`);
    await client.query(`drop table if exists ${byTime}`);
    await client.query(`create table ${table} ${PLAIN_REF_COLUMNS}`);
    await copyRows(client, table, mapLines(file, plainCopyRow));
    await finish(table);
    loadSeconds = (performance.now() - t) / 1000;
  }
  if (opts.timeOrder !== false && !(await complete(byTime))) {
    await client.query(`drop table if exists ${byTime}`);
    await client.query(`create table ${byTime} as select * from ${table} order by "timestamp"`);
    await finish(byTime);
  }
  return { client, tables: { file: table, time: byTime }, loadSeconds, close: () => client.end() };
}

async function* mapLines(file: string, f: (line: string) => string): AsyncIterable<string> {
  for await (const line of readLines(file)) yield f(line);
}

export interface PlainClickhouse {
  /** the table of each order: `edge` in file order, `edge_by_key` sorted by (project, timestamp) */
  tables: Record<PeerOrder, string>;
  loadSeconds: number | null;
  /** runs one query in the peer's process; its rows as JSONEachRow objects */
  query(sql: string, params: Record<string, string>): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

/**
 * The ClickHouse peer of an events file: chDB in a child process of its own
 * (clickhouse-peer-child.ts) over its data directory under .tmp/bench, kept and reused. Queries
 * go to it by IPC (a round trip of well under a millisecond, counted in the peer's time).
 */
export async function openPlainClickhouse(file: string): Promise<PlainClickhouse> {
  const dir = resolve(join(BENCH_DIR, `plain-${basename(file).replace(/\.ndjson$/, "")}.chdb`));
  const child = fork(new URL("./clickhouse-peer-child.ts", import.meta.url), [dir, resolve(file)], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const pending = new Map<
    number,
    { resolve: (rows: Record<string, unknown>[]) => void; reject: (e: Error) => void }
  >();
  let next = 0;
  const ready = new Promise<number | null>((res, rej) => {
    child.once("exit", (code) => rej(new Error(`the ClickHouse peer exited (${code}) before it was ready`)));
    child.on(
      "message",
      (m: {
        ready?: boolean;
        loadSeconds?: number | null;
        id?: number;
        rows?: Record<string, unknown>[];
        error?: string;
      }) => {
        if (m.ready) return res(m.loadSeconds ?? null);
        const p = pending.get(m.id!);
        if (!p) return;
        pending.delete(m.id!);
        if (m.error !== undefined) p.reject(new Error(m.error));
        else p.resolve(m.rows!);
      },
    );
  });
  const loadSeconds = await ready;
  return {
    tables: { file: "edge", time: "edge_by_key" },
    loadSeconds,
    query: (sql, params) =>
      new Promise((res, rej) => {
        const id = next++;
        pending.set(id, { resolve: res, reject: rej });
        child.send({ id, sql, params });
      }),
    close: async () => {
      const exited = new Promise((r) => child.once("exit", r));
      child.disconnect();
      await exited;
    },
  };
}
