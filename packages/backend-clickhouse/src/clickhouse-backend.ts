import { resolve } from "node:path";
import {
  type Backend,
  type BoundValues,
  type CompiledQuery,
  type ExecuteOptions,
  type IngestBatch,
  type IngestResult,
  iterateLinesNow,
  type LoadOptions,
  type LoadSummary,
  type LogSchema,
  QesError,
  type QueryResult,
  type RetentionPolicy,
  type RetentionReport,
  type SourceStats,
} from "@qes/core";
import {
  type ClickhouseConfig,
  DEFAULT_CLICKHOUSE_PATH,
  databaseOf,
  isClickhouseIdentifier,
  maxMemoryOf,
  tableRetentionDays,
} from "./clickhouse-config.ts";
import { type ClickhouseEngine, openChdbEngine, openHttpEngine } from "./clickhouse-connection.ts";
import { clickhouseDialect } from "./clickhouse-dialect.ts";
import { isUnavailable } from "./clickhouse-errors.ts";
import { executeOnClickhouse, killQuerySql, type QueryLimits } from "./clickhouse-executor.ts";
import { ingestIntoClickhouse } from "./clickhouse-ingest.ts";
import { initStorage } from "./clickhouse-init.ts";
import { dropLeftoverColumns } from "./clickhouse-leftover-columns.ts";
import { type LoadContext, loadIntoClickhouse } from "./clickhouse-loader.ts";
import { ensureQueryUser, queryUrlFor } from "./clickhouse-query-user.ts";
import { applyClickhouseRetention, clickhouseSourceStats } from "./clickhouse-retention.ts";
import { readLogSchema, readSchemaVersion } from "./clickhouse-schema-store.ts";
import { dropLeftoverStaging } from "./clickhouse-staging-leftovers.ts";
import type { StorageLayout } from "./clickhouse-storage.ts";

/** How often `schema()` looks for another process's change (DESIGN.md §3: within a second). */
const SCHEMA_CHECK_MS = 500;

class ClickhouseBackend implements Backend {
  readonly name = "clickhouse";
  /** ingest bodies are parsed and their rows encoded on the server's ingest workers */
  readonly ingestPreparer = new URL("./clickhouse-ingest-prepare.ts", import.meta.url).href;
  readonly dialect = clickhouseDialect;
  private engine: ClickhouseEngine | undefined;
  private current: LogSchema | undefined;
  private checkedAt = 0;
  private executed = 0;
  private writes: Promise<unknown> = Promise.resolve();
  private warnings: readonly string[] = [];
  readonly layout: StorageLayout;
  private readonly limits: QueryLimits;

  constructor(private readonly config: ClickhouseConfig) {
    const database = databaseOf(config);
    if (!isClickhouseIdentifier(database))
      throw new QesError(
        "invalid_config",
        `ClickHouse database "${database}" must match [A-Za-z_][A-Za-z0-9_]*`,
      );
    if (config.cluster !== undefined && !isClickhouseIdentifier(config.cluster))
      throw new QesError(
        "invalid_config",
        `QES_CLICKHOUSE_CLUSTER "${config.cluster}" must match [A-Za-z_][A-Za-z0-9_]*`,
      );
    this.layout = config.cluster === undefined ? { database } : { database, cluster: config.cluster };
    const maxMemoryBytes = maxMemoryOf(config);
    this.limits = maxMemoryBytes === undefined ? {} : { maxMemoryBytes };
  }

  private async open(): Promise<ClickhouseEngine> {
    if (this.engine) return this.engine;
    const { database } = this.layout;
    if (this.config.url === undefined) {
      this.engine = await openChdbEngine(resolve(this.config.path ?? DEFAULT_CLICKHOUSE_PATH), database);
    } else {
      const queryUrl = this.config.queryUrl ?? queryUrlFor(this.config.url, database);
      this.engine = openHttpEngine(this.config.url, queryUrl, database);
    }
    return this.engine;
  }

  async init(): Promise<void> {
    const engine = await this.open();
    try {
      const storage = await initStorage(
        engine.owner,
        this.layout,
        (s) => tableRetentionDays(this.config, s),
        this.config.leaseTiming,
      );
      this.current = storage.schema;
      this.warnings = storage.warnings;
      // embedded: this process holds the directory alone, so any staging table or column the
      // schema does not know is a killed one's
      if (engine.kind === "chdb") {
        await engine.owner.use((client) => dropLeftoverStaging(client, this.layout));
        const columns = await engine.owner.use((client) =>
          dropLeftoverColumns(client, this.layout, storage.schema),
        );
        this.warnings = [...this.warnings, ...columns];
      }
      if (engine.kind === "http" && this.config.queryUrl === undefined) {
        await engine.owner.use((client) => ensureQueryUser(client, this.config.url!, this.layout));
      }
    } catch (e) {
      throw unavailable(e, "cannot initialise ClickHouse storage");
    }
    this.checkedAt = Date.now();
  }

  startupWarnings(): readonly string[] {
    return this.warnings;
  }

  private ready(): { engine: ClickhouseEngine; schema: LogSchema } {
    if (!this.engine || !this.current)
      throw new QesError("backend_unavailable", "the ClickHouse backend is not initialised (call init())");
    return { engine: this.engine, schema: this.current };
  }

  async schema(opts: { fresh?: boolean } = {}): Promise<LogSchema> {
    return this.readSchema(opts.fresh === true);
  }

  /**
   * The schema, its version asked again when the last ask is older than SCHEMA_CHECK_MS or when
   * `now`: a write must not go by a schema another instance has changed since (a source it made
   * looked new, so its retries skipped the duplicate check and were stored twice, and its
   * widening made this instance's staging tables differ from the source: 500 at the attach).
   */
  private async readSchema(now: boolean): Promise<LogSchema> {
    const { engine, schema } = this.ready();
    if (!now && Date.now() - this.checkedAt < SCHEMA_CHECK_MS) return schema;
    this.checkedAt = Date.now();
    const version = await engine.query.use((c) => readSchemaVersion(c, this.layout));
    if (version !== schema.version) {
      const fresh = await engine.query.use((c) => readLogSchema(c, this.layout));
      if (fresh) this.current = fresh;
    }
    return this.current!;
  }

  private context(client: LoadContext["client"]): LoadContext {
    return { client, layout: this.layout, retentionDays: (s) => tableRetentionDays(this.config, s) };
  }

  /** Runs writes one at a time: they share the schema, and each reads it fresh first (`readSchema(true)`). */
  private serialised<T>(run: () => Promise<T>): Promise<T> {
    const result = this.writes.then(run, run);
    this.writes = result.catch(() => {});
    return result;
  }

  load(
    source: string,
    lines: AsyncIterable<string> | Iterable<string>,
    opts?: LoadOptions,
  ): Promise<LoadSummary> {
    const pending = iterateLinesNow(lines);
    return this.serialised(async () => {
      const { engine } = this.ready();
      const current = await this.readSchema(true);
      const outcome = await engine.owner.use((client) =>
        loadIntoClickhouse(this.context(client), current, source, pending, opts),
      );
      if (outcome.schema) this.current = outcome.schema;
      return outcome.summary;
    });
  }

  ingest(batches: readonly IngestBatch[]): Promise<IngestResult[]> {
    return this.serialised(async () => {
      const { engine } = this.ready();
      const current = await this.readSchema(true);
      const outcome = await engine.owner.use((client) =>
        ingestIntoClickhouse(this.context(client), current, batches),
      );
      if (outcome.schema) this.current = outcome.schema;
      return outcome.results;
    });
  }

  applyRetention(policy: RetentionPolicy, nowMicros: bigint): Promise<RetentionReport[]> {
    return this.serialised(async () => {
      const { engine } = this.ready();
      const current = await this.readSchema(true);
      return engine.owner.use((client) =>
        applyClickhouseRetention(client, this.layout, current, policy, nowMicros),
      );
    });
  }

  async sourceStats(): Promise<SourceStats[]> {
    const { engine } = this.ready();
    const current = await this.schema();
    return engine.owner.use((client) => clickhouseSourceStats(client, this.layout, current));
  }

  async execute(query: CompiledQuery, values: BoundValues, opts: ExecuteOptions): Promise<QueryResult> {
    const { engine } = this.ready();
    this.executed++;
    const kill = (marker: string) =>
      engine.owner.use(async (client) => {
        await client.command({ query: killQuerySql(marker) });
      });
    return engine.query.use((client) => executeOnClickhouse(client, query, values, opts, this.limits, kill));
  }

  async health(): Promise<void> {
    const { engine } = this.ready();
    try {
      await engine.query.use(async (client) => {
        const rs = await client.query({ query: "SELECT 1 AS ok", format: "JSONEachRow" });
        await rs.json();
      });
    } catch (e) {
      throw unavailable(e, "ClickHouse does not answer");
    }
  }

  executedQueries(): number {
    return this.executed;
  }

  async close(): Promise<void> {
    await this.writes;
    const engine = this.engine;
    this.engine = undefined;
    this.current = undefined;
    await engine?.close();
  }
}

function unavailable(e: unknown, what: string): QesError {
  if (e instanceof QesError) return e;
  const message = e instanceof Error ? e.message : String(e);
  return new QesError("backend_unavailable", `${what}: ${message}`, { cause: e });
}

/**
 * The ClickHouse backend (DESIGN.md §12): embedded chDB at `config.path`, or a server or cluster
 * at `config.url`, both through @clickhouse/client. Opens nothing until `init()`, which creates
 * the database's tables and the nine built-in sources (and, on a server, the read-only user).
 */
export function createClickhouseBackend(
  config: ClickhouseConfig = {},
): Backend & { readonly layout: StorageLayout } {
  return new ClickhouseBackend(config);
}

export { isUnavailable };
