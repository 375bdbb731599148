import {
  type Backend,
  type BoundValues,
  type CompiledQuery,
  type EstimateOptions,
  type ExecuteOptions,
  type IngestBatch,
  type IngestResult,
  type LoadOptions,
  type LoadSummary,
  type LogSchema,
  QesError,
  type QueryResult,
  type RetentionPolicy,
  type RetentionReport,
  type SourceDayLimit,
  type SourceSchema,
  type SourceStats,
  type StatisticsReport,
} from "@qes/core";
import { Kysely } from "kysely";
import pg from "pg";
import {
  type PostgresBackendConfig,
  type ResolvedPostgresConfig,
  resolvePostgresConfig,
} from "./postgres-config.ts";
import { runsWithinDays } from "./postgres-day-groups.ts";
import { postgresDialect } from "./postgres-dialect.ts";
import { toQesError } from "./postgres-errors.ts";
import { createQueryPool, ignoreErrorsOfCheckedOutClients, PostgresExecutor } from "./postgres-executor.ts";
import { ingestEvents } from "./postgres-ingest.ts";
import { loadEvents } from "./postgres-loader.ts";
import { OwnSchemaPostgresDialect } from "./postgres-migration-dialect.ts";
import { migrateStorage } from "./postgres-migrations.ts";
import { ensureReaderRole, grantSchemaUsage, readerPasswordFor } from "./postgres-query-role.ts";
import { applyPostgresRetention, postgresSourceStats, retentionLockKey } from "./postgres-retention.ts";
import { readSourceDayLimit } from "./postgres-source-day-limit.ts";
import { advisoryKey } from "./postgres-sql.ts";
import { refreshPostgresStatistics } from "./postgres-statistics.ts";
import {
  ensureBuiltinSources,
  lockSourceForLoad,
  readLogSchema,
  readSchemaVersion,
} from "./postgres-storage.ts";
import { PostgresStoredIds } from "./postgres-stored-ids.ts";
import { withSessionOptions } from "./postgres-url-options.ts";

/** How long a schema read is trusted before the version is asked again (DESIGN.md §3: within a second). */
const SCHEMA_RECHECK_MS = 500;
/**
 * How old a schema read may be and still be answered while it is revalidated in the background;
 * past it the caller waits for the (cheap, shared) version read: a server that sat idle answered
 * its first query after another instance's widening from the model of before it, however long ago
 * that was.
 */
const SCHEMA_STALE_MS = 900;
/**
 * Owner connections: loads (one each), schema reads, start-up, ingest's commit, and the
 * background work that holds one for a while: the build of an ingest filter of ids (one at a
 * time, up to ~2 s per million ids), the statistics pass and retention. All of those at once
 * still leave one for a commit and one for a schema read.
 */
const OWNER_POOL_SIZE = 6;

/**
 * The PostgreSQL backend (DESIGN.md §6): log tables in one schema, loads over the owner
 * connection, queries over a separate pool logged in as a SELECT-only role.
 */
export class PostgresBackend implements Backend {
  readonly name = "postgres";
  /** ingest bodies are parsed and their COPY rows encoded on the server's ingest workers */
  readonly ingestPreparer = new URL("./postgres-ingest-prepare.ts", import.meta.url).href;
  readonly dialect = postgresDialect;
  readonly config: ResolvedPostgresConfig;
  /** one query per pooled connection: admitting no more than the pool never waits for a connection */
  get queryConcurrency(): number {
    return this.config.pool;
  }

  private readonly ownerPool: pg.Pool;
  private readonly queryPool: pg.Pool;
  private readonly db: Kysely<any>;
  private readonly executor: PostgresExecutor;
  private cached: LogSchema | null = null;
  private checkedAt = 0;
  private refreshing: Promise<LogSchema> | null = null;
  private readonly storedIds: PostgresStoredIds;
  private dayLimit: SourceDayLimit | undefined;
  /** read from the server's lock table at init (postgres-source-day-limit.ts) */
  get sourceDayLimit(): SourceDayLimit | undefined {
    return this.dayLimit;
  }

  constructor(config: PostgresBackendConfig) {
    this.config = resolvePostgresConfig(config, readerPasswordFor);
    this.ownerPool = new pg.Pool({
      // UTC whatever the URL's options or the database's TimeZone: partition bounds are read
      // back as UTC days (postgres-partitions.ts)
      ...withSessionOptions(this.config.url, "-c TimeZone=UTC -c DateStyle=ISO"),
      max: OWNER_POOL_SIZE,
      connectionTimeoutMillis: this.config.connectTimeoutMs,
      application_name: "qes-owner",
    });
    this.ownerPool.on("error", () => undefined);
    ignoreErrorsOfCheckedOutClients(this.ownerPool);
    this.db = new Kysely<any>({
      dialect: new OwnSchemaPostgresDialect({ pool: this.ownerPool }, this.config.schema),
    });
    this.queryPool = createQueryPool(this.config);
    this.executor = new PostgresExecutor(this.queryPool, this.config);
    this.storedIds = new PostgresStoredIds(this.ownerPool, this.config.schema);
  }

  /**
   * Creates or migrates the schema, the reader role, its grants and the nine built-in sources.
   * Idempotent; parallel start-ups queue on an advisory lock.
   */
  async init(): Promise<void> {
    try {
      const client = await this.ownerPool.connect();
      const lock = advisoryKey(`qes:init:${this.config.schema}`);
      let broken = false;
      try {
        await client.query("select pg_advisory_lock($1::bigint)", [lock]);
        try {
          await migrateStorage(this.db, this.config.schema);
          await ensureReaderRole(client, this.config);
          await grantSchemaUsage(client, this.config);
          await client.query("begin");
          await lockSourceForLoad(client, this.config.schema);
          await ensureBuiltinSources(client, this.config);
          await client.query("commit");
        } catch (e) {
          await client.query("rollback").catch(() => undefined);
          throw e;
        } finally {
          await client.query("select pg_advisory_unlock($1::bigint)", [lock]).catch(() => {
            broken = true;
          });
        }
      } finally {
        client.release(broken);
      }
      await this.refreshSchema(true);
      this.dayLimit = await readSourceDayLimit(this.ownerPool);
    } catch (e) {
      throw toQesError(e, "preparing storage");
    }
    await this.checkReaderLogin();
  }

  /** The query role must be able to log in (pg_hba, password) before the service says it is ready. */
  private async checkReaderLogin(): Promise<void> {
    try {
      await this.executor.health();
    } catch (e) {
      const cause = (e as { cause?: { code?: string } }).cause;
      if (cause?.code?.startsWith("28")) {
        throw new QesError(
          "invalid_config",
          `the query role ${this.config.readerRole} cannot log in (${cause.code}): allow it in pg_hba.conf, or set ` +
            "QES_POSTGRES_QUERY_URL with its password",
          { cause: e },
        );
      }
      throw e;
    }
  }

  /**
   * The model as last read; past SCHEMA_RECHECK_MS the version is asked again in the background
   * (stale while revalidating) rather than by the request that noticed: on a busy server that
   * one read held every request of its moment (soak under attack: requests waited seconds on
   * "reading the schema"). Past SCHEMA_STALE_MS (after an idle spell) the request waits for that
   * read, so another process's change is seen within a second.
   */
  async schema(opts: { fresh?: boolean } = {}): Promise<LogSchema> {
    const cached = this.cached;
    if (cached === null) return this.refreshSchema(false);
    if (opts.fresh === true) {
      // a read already under way may have begun before what the caller saw; the version only,
      // then the model only when it moved (a refused query costs one cheap read)
      await this.refreshing?.catch(() => undefined);
      return this.refreshSchema(false);
    }
    const age = Date.now() - this.checkedAt;
    if (age < SCHEMA_RECHECK_MS) return cached;
    const refreshed = this.refreshSchema(false);
    if (age < SCHEMA_STALE_MS) {
      refreshed.catch(() => undefined);
      return cached;
    }
    // an unreachable server keeps the model last read: what runs against it says it is down
    return refreshed.catch(() => cached);
  }

  /** Reads the version (cheap) and the whole model only when it moved; one read at a time. */
  private async refreshSchema(full: boolean): Promise<LogSchema> {
    if (this.refreshing !== null) {
      if (!full) return this.refreshing;
      // a read that started before our change must not land after it
      await this.refreshing.catch(() => undefined);
    }
    const run: Promise<LogSchema> = (async () => {
      // when the read begins: a commit after it is not in what it reads
      const reading = Date.now();
      try {
        const cached = this.cached;
        if (!full && cached !== null) {
          const version = await readSchemaVersion(this.ownerPool, this.config.schema);
          if (version === cached.version) {
            this.checkedAt = reading;
            return cached;
          }
        }
        const schema = await readLogSchema(this.ownerPool, this.config.schema);
        this.cached = schema;
        this.checkedAt = reading;
        return schema;
      } catch (e) {
        throw toQesError(e, "reading the schema");
      }
    })();
    this.refreshing = run;
    run
      .finally(() => {
        if (this.refreshing === run) this.refreshing = null;
      })
      .catch(() => undefined);
    return run;
  }

  async load(
    source: string,
    lines: AsyncIterable<string> | Iterable<string>,
    opts?: LoadOptions,
  ): Promise<LoadSummary> {
    const result = await loadEvents(this.ownerPool, this.config, source, lines, opts).finally(() =>
      // it stored ids our ingest filter did not see: built again from the table at once
      this.storedIds.forget(source),
    );
    if (result.schemaChanged) await this.refreshSchema(true);
    return result.summary;
  }

  /**
   * One transaction per run of batches within the days a transaction may lock
   * (postgres-day-groups.ts): nearly always the whole call. Should a later run fail, the earlier
   * ones stay committed; the caller's retry of each batch alone finds their ids stored.
   */
  async ingest(batches: readonly IngestBatch[]): Promise<IngestResult[]> {
    const results: IngestResult[] = [];
    // the model a commit met, when another instance changed it since this one last read it: a
    // query here right after the 200 reads what the request stored (a source another instance
    // created was "not a known log source", a field it added read as NULL)
    let stale = false;
    try {
      for (const run of runsWithinDays(batches, this.config.ingestDaysPerTransaction)) {
        const result = await ingestEvents(this.ownerPool, this.config, this.storedIds, run, this.dayLimit);
        stale ||= result.schemaChanged || result.sources.some((s) => !this.#knows(s));
        results.push(...result.results);
      }
    } finally {
      if (stale) await this.refreshSchema(true);
    }
    return results;
  }

  /** the cached model holds `source` as it is */
  #knows(source: SourceSchema): boolean {
    const held = this.cached?.sources[source.name];
    return held !== undefined && JSON.stringify(held.fields) === JSON.stringify(source.fields);
  }

  /**
   * Runs retention unless another instance is running it right now (a session advisory lock):
   * then it returns no reports, as the other run does the work.
   */
  async applyRetention(policy: RetentionPolicy, nowMicros: bigint): Promise<RetentionReport[]> {
    const reports = await this.#onceAcrossInstances(
      retentionLockKey(this.config.schema),
      "applying retention",
      async (client) =>
        applyPostgresRetention(client, this.config.schema, await this.refreshSchema(true), policy, nowMicros),
    );
    return reports ?? [];
  }

  /**
   * Analyzes the partitions that changed enough where autovacuum does not run (and so would
   * not), unless another instance is doing it right now: then nothing here.
   */
  async refreshStatistics(): Promise<StatisticsReport> {
    const report = await this.#onceAcrossInstances(
      advisoryKey(`qes:statistics:${this.config.schema}`),
      "refreshing statistics",
      (client) => refreshPostgresStatistics(client, this.config.schema),
    );
    return report ?? { analyzed: [] };
  }

  /**
   * `work` on an owner connection holding the session advisory lock `key`, or undefined at once
   * when another session holds it (another instance is doing the same work).
   */
  async #onceAcrossInstances<T>(
    key: string,
    doing: string,
    work: (client: pg.PoolClient) => Promise<T>,
  ): Promise<T | undefined> {
    let client: pg.PoolClient;
    try {
      client = await this.ownerPool.connect();
    } catch (e) {
      throw toQesError(e, `connecting for ${doing}`);
    }
    let broken = false;
    try {
      const { rows } = await client.query<{ locked: boolean }>(
        "select pg_try_advisory_lock($1::bigint) as locked",
        [key],
      );
      if (!rows[0]?.locked) return undefined;
      try {
        return await work(client);
      } finally {
        await client.query("select pg_advisory_unlock($1::bigint)", [key]).catch(() => {
          broken = true;
        });
      }
    } catch (e) {
      throw toQesError(e, doing);
    } finally {
      client.release(broken);
    }
  }

  async sourceStats(): Promise<SourceStats[]> {
    try {
      return await postgresSourceStats(this.ownerPool, this.config.schema, await this.schema());
    } catch (e) {
      throw toQesError(e, "reading source statistics");
    }
  }

  execute(query: CompiledQuery, values: BoundValues, opts: ExecuteOptions): Promise<QueryResult> {
    return this.executor.execute(query, values, opts);
  }

  estimateHeavy(query: CompiledQuery, values: BoundValues, opts: EstimateOptions): Promise<boolean> {
    return this.executor.estimateHeavy(query, values, opts);
  }

  health(): Promise<void> {
    return this.executor.health();
  }

  executedQueries(): number {
    return this.executor.executedQueries();
  }

  async close(): Promise<void> {
    await this.storedIds.stop();
    await Promise.allSettled([this.queryPool.end(), this.db.destroy()]);
  }
}

/** A PostgreSQL backend; call `init()` before use. */
export function createPostgresBackend(config: PostgresBackendConfig): PostgresBackend {
  return new PostgresBackend(config);
}
