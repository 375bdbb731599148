import { randomUUID } from "node:crypto";
import type { ClickHouseClient } from "@clickhouse/client";
import {
  cloneSourceSchema,
  iterateLinesNow,
  LoadIds,
  type LoadOptions,
  type LoadSummary,
  type LogEvent,
  type LogSchema,
  loadLines,
  loadSummary,
  newSourceSchema,
  nowMicros,
  type SchemaChange,
  type SourceSchema,
  widenForEvent,
} from "@qes/core";
import { createRowsEncoder, EVENTS_PER_INSERT, insertRows } from "./clickhouse-insert-rows.ts";
import { partitionKeys } from "./clickhouse-partition-key.ts";
import { readSchemaVersion, writeLogSchema } from "./clickhouse-schema-store.ts";
import { qualified, sqlString } from "./clickhouse-sql.ts";
import {
  createSourceSql,
  dataTable,
  dropSourceSql,
  mergeAlters,
  type StorageLayout,
  schemaChangeSql,
} from "./clickhouse-storage.ts";
import { storedIdsIn } from "./clickhouse-stored-ids.ts";

/** Settings of DDL that rewrites values: wait until every replica has done it. */
export const MUTATION_SETTINGS = { mutations_sync: "2", alter_sync: "2" } as const;

export interface LoadContext {
  client: ClickHouseClient;
  layout: StorageLayout;
  /** retention of a new source's table (its TTL) */
  retentionDays(source: string): number;
}

export interface LoadOutcome {
  summary: LoadSummary;
  /** the schema after the load, when it changed */
  schema?: LogSchema;
}

/** the name of every staging table begins so (clickhouse-staging-leftovers.ts finds those left behind) */
export const STAGING_PREFIX = "qes_staging_";

/**
 * Where one call's rows wait until they are all valid: a plain MergeTree table shaped like the
 * source's, in the same database. ClickHouse has no multi-statement transactions; rows move into
 * the source only once every line has parsed, so a malformed line stores nothing, and only once
 * the source's schema is persisted: a source made by a call killed after its rows moved in and
 * before its schema was stored was unknown at the restart, so the retry took it for new, skipped
 * the check of stored ids and stored every event twice.
 *
 * Events wait in memory until a batch is full and are flattened then, for the schema as widened so
 * far: a widening costs no insert of its own, and the staging table is created (or altered) just
 * before the first (next) insert, in one statement per table.
 */
export class StagedSource {
  readonly staging: string;
  /** every change of this call, in order (the source's table takes them at commit) */
  readonly changes: SchemaChange[] = [];
  /** changes the staging table has not taken yet */
  private unapplied: SchemaChange[] = [];
  private created = false;
  private pending: LogEvent[] = [];
  /** rows encoded ahead for `schema` as it is now: the caller flushes them before it widens */
  private encoded: string[] = [];

  constructor(
    private readonly ctx: LoadContext,
    readonly schema: SourceSchema,
    readonly isNew: boolean,
    /** fsync the staged rows (ingest acknowledges durable events; loads rely on the OS) */
    private readonly durable: boolean,
  ) {
    this.staging = `${STAGING_PREFIX}${randomUUID().replaceAll("-", "")}`;
  }

  private get local(): StorageLayout {
    return { database: this.ctx.layout.database };
  }

  /** Records a widening already applied to `schema` (core's widenSchema). */
  widened(changes: SchemaChange[]): void {
    this.changes.push(...changes);
    if (this.created) this.unapplied.push(...changes);
  }

  async add(event: LogEvent): Promise<void> {
    this.pending.push(event);
    if (this.pending.length + this.encoded.length >= EVENTS_PER_INSERT) await this.flush();
  }

  /** whether the staging table exists (holds the rows flushed so far) */
  get holdsRows(): boolean {
    return this.created;
  }

  /** whether rows encoded ahead wait: the schema may not widen before they are flushed */
  get holdsEncoded(): boolean {
    return this.encoded.length > 0;
  }

  /** Rows encoded ahead for `schema` as it is now (`IngestBatch.prepared`), those at `keep`. */
  async addEncoded(rows: readonly string[], keep: readonly number[]): Promise<void> {
    for (const i of keep) this.encoded.push(rows[i]!);
    if (this.pending.length + this.encoded.length >= EVENTS_PER_INSERT) await this.flush();
  }

  /**
   * The partition key the staging table must have: its target's, as `ATTACH PARTITION` moves
   * parts only between tables of one key (a source made before `PARTITION_KEY` keeps `toDate`);
   * a new source's table gets the new key.
   */
  private async targetPartitionKey(): Promise<string | undefined> {
    if (this.isNew) return undefined;
    const keys = await partitionKeys(this.ctx.client, this.ctx.layout, [this.schema.table]);
    return keys.get(this.schema.table);
  }

  /** Inserts the pending events into the staging table. */
  async flush(): Promise<void> {
    if (this.pending.length === 0 && this.encoded.length === 0) return;
    const { client } = this.ctx;
    if (!this.created) {
      const [create] = createSourceSql(
        this.local,
        { ...this.schema, table: this.staging },
        0,
        this.durable,
        await this.targetPartitionKey(),
      );
      await client.command({ query: create! });
      this.created = true;
      this.unapplied = [];
    } else if (this.unapplied.length > 0) {
      const sql = this.unapplied.flatMap((c) => schemaChangeSql(this.local, this.schema, c, this.staging));
      for (const statement of mergeAlters(sql))
        await client.command({ query: statement, clickhouse_settings: MUTATION_SETTINGS });
      this.unapplied = [];
    }
    const rows = createRowsEncoder(this.schema);
    const events = this.pending;
    const encoded = this.encoded;
    this.pending = [];
    this.encoded = [];
    await insertRows(
      client,
      this.ctx.layout.database,
      this.staging,
      rows.columns,
      encoded.join("") + rows.encode(events),
    );
  }

  /**
   * Makes the source ready for the rows: creates it when new, or widens it. Its schema is then
   * persisted (`persistSchemas`) before `attach` moves any row in: a process killed between the
   * two leaves a source or columns with no rows yet, never rows the stored schema does not know.
   */
  async prepareTarget(): Promise<void> {
    const { client, layout } = this.ctx;
    await this.flush();
    if (this.isNew) {
      for (const sql of createSourceSql(layout, this.schema, this.ctx.retentionDays(this.schema.name)))
        await client.command({ query: sql });
    } else {
      const sql = this.changes.flatMap((c) => schemaChangeSql(layout, this.schema, c));
      for (const statement of mergeAlters(sql))
        await client.command({ query: statement, clickhouse_settings: MUTATION_SETTINGS });
    }
  }

  /**
   * Makes the staged rows part of the source (after `prepareTarget` and the schema's persisting):
   * moves the staged daily partitions in (hard links, no copy) — or, on a cluster, inserts them
   * through the Distributed table so they are sharded.
   */
  async attach(): Promise<void> {
    const { client, layout } = this.ctx;
    if (!this.created) return;
    const target = qualified(layout.database, this.schema.table);
    const staged = qualified(layout.database, this.staging);
    if (layout.cluster !== undefined) {
      await client.command({ query: `INSERT INTO ${target} SELECT * FROM ${staged}` });
      return;
    }
    const rs = await client.query({
      query:
        "SELECT DISTINCT partition_id AS p FROM system.parts WHERE database = {db:String} AND table = {t:String} AND active",
      query_params: { db: layout.database, t: this.staging },
      format: "JSONEachRow",
    });
    const local = qualified(layout.database, dataTable(layout, this.schema.table));
    for (const { p } of await rs.json<{ p: string }>()) {
      await client.command({
        query: `ALTER TABLE ${local} ATTACH PARTITION ID ${sqlString(p)} FROM ${staged}`,
      });
    }
  }

  /** whether committing makes or widens the source, so that its schema is persisted */
  get changesSchema(): boolean {
    return this.isNew || this.changes.length > 0;
  }

  /** Removes the staging table (after commit or failure). */
  async drop(): Promise<void> {
    if (!this.created) return;
    for (const sql of dropSourceSql({ database: this.ctx.layout.database }, this.staging))
      await this.ctx.client.command({ query: sql }).catch(() => {});
  }
}

/** Opens the staging of one source for a load or an ingest; `current` is the newest schema. */
export function stageSource(
  ctx: LoadContext,
  current: LogSchema,
  sourceName: string,
  durable: boolean,
): StagedSource {
  const existing = current.sources[sourceName];
  const schema = existing ? cloneSourceSchema(existing) : newSourceTable(ctx.layout, current, sourceName);
  return new StagedSource(ctx, schema, existing === undefined, durable);
}

/**
 * A new source's schema, its table and (on a cluster) its local data table named apart from every
 * source's: source `x local`'s Distributed table was `x`'s data table `src_x_local` (or the other
 * way round), and `CREATE TABLE IF NOT EXISTS` let one source's rows go into the other's table.
 */
export function newSourceTable(layout: StorageLayout, current: LogSchema, sourceName: string): SourceSchema {
  const taken = Object.values(current.sources).flatMap((s) => [s.table, dataTable(layout, s.table)]);
  return newSourceSchema(sourceName, taken, (table) => [dataTable(layout, table)]);
}

/** Stores the widened schemas of committed sources as the next version. */
export async function persistSchemas(
  ctx: LoadContext,
  current: LogSchema,
  changed: SourceSchema[],
): Promise<LogSchema> {
  const stored = await readSchemaVersion(ctx.client, ctx.layout);
  const sources = { ...current.sources };
  for (const s of changed) sources[s.name] = s;
  return writeLogSchema(ctx.client, ctx.layout, Math.max(stored, current.version), sources);
}

/**
 * Loads NDJSON lines into a source: parse, leave out events whose id the source stores or an
 * earlier line had (`LoadIds`, as ingest leaves them out), widen (the staging table follows),
 * insert in batches into the staging table, then commit (see `StagedSource`). A malformed line
 * drops the staging table and rethrows QesError('invalid_event', …, {line}): nothing is stored.
 */
export async function loadIntoClickhouse(
  ctx: LoadContext,
  current: LogSchema,
  sourceName: string,
  lines: AsyncIterable<string> | Iterable<string>,
  opts: LoadOptions = {},
): Promise<LoadOutcome> {
  const started = performance.now();
  const input = iterateLinesNow(lines);
  const staged = stageSource(ctx, current, sourceName, false);
  try {
    const ids = new LoadIds({
      storedBefore: staged.isNew ? 0 : await countEvents(ctx, staged.schema.table),
      // looked up through the id projection (clickhouse-storage.ts), never read whole
      probesBeforeRead: Number.POSITIVE_INFINITY,
      flush: () => staged.flush(),
      stored: (asked) => storedByLoad(ctx, staged, asked),
    });
    const read = await loadLines(
      input,
      {
        source: sourceName,
        nowMicros: opts.nowMicros ?? nowMicros(),
        batch: EVENTS_PER_INSERT,
        progressEvery: 2048,
        ids,
        onProgress: opts.onProgress,
      },
      async (events) => {
        for (const { event, line } of events) {
          const changes = widenForEvent(staged.schema, event.body, line, opts.checkWidening);
          if (changes.length > 0) staged.widened(changes);
          await staged.add(event);
        }
      },
    );
    await staged.prepareTarget();
    const schema = staged.changesSchema ? await persistSchemas(ctx, current, [staged.schema]) : undefined;
    await staged.attach();
    opts.onProgress?.(read);
    const summary = loadSummary(sourceName, read.events, ids.duplicates, started);
    return schema === undefined ? { summary } : { summary, schema };
  } finally {
    await staged.drop();
  }
}

async function countEvents(ctx: LoadContext, table: string): Promise<number> {
  const rs = await ctx.client.query({
    query: `SELECT count() AS n FROM ${qualified(ctx.layout.database, table)}`,
    format: "JSONEachRow",
  });
  return Number((await rs.json<{ n: string }>())[0]?.n ?? 0);
}

/** The ids among `ids` that the source stores or the load has staged (flushed) so far. */
async function storedByLoad(ctx: LoadContext, staged: StagedSource, ids: string[]): Promise<Set<string>> {
  const tables = staged.isNew ? [] : [staged.schema.table];
  if (staged.holdsRows) tables.push(staged.staging);
  return storedIdsIn(ctx.client, ctx.layout.database, tables, ids);
}
