import { type ClickHouseClient, createClient } from "@clickhouse/client";
import { QesError } from "@qes/core";
import { chdbHolder } from "./chdb-holder.ts";
import { SESSION_SETUP_SQL, withSessionParams } from "./clickhouse-session-params.ts";
import { quoteIdent } from "./clickhouse-sql.ts";

/**
 * Clients of one engine, lent out one call at a time. Over HTTP one client (with its own socket
 * pool) serves every call. Embedded chDB needs care the HTTP server does not:
 * - settings given with a call become `SET`s that stay on the chDB session, and the current
 *   database is per session: every client runs `USE <database>` once and queries carry their
 *   limits in a `SETTINGS` clause instead;
 * - after a failed, cancelled or aborted call, the session's output buffer still holds the
 *   partial result and prepends it to the next call's (measured with chDB 3.4.0), and an aborted
 *   call keeps the session busy until the engine stops. A client whose call failed is closed and
 *   a fresh one (~3 ms) takes its place.
 */
export interface ClientPool {
  /** runs `fn` with a client of this pool; a failed call retires an embedded client */
  use<T>(fn: (client: ClickHouseClient) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The engine a backend talks to: an owner pool (DDL, loads, kills) and a query pool. */
export interface ClickhouseEngine {
  readonly kind: "chdb" | "http";
  readonly database: string;
  readonly owner: ClientPool;
  readonly query: ClientPool;
  close(): Promise<void>;
}

/** Settings every call of a client carries (HTTP only: on chDB they would persist, see above). */
const HTTP_SETTINGS = {
  // the server stops a read-only query whose client went away (the abort path)
  cancel_http_readonly_queries_on_client_close: 1,
} as const;

class SharedClientPool implements ClientPool {
  constructor(private readonly client: ClickHouseClient) {}
  use<T>(fn: (client: ClickHouseClient) => Promise<T>): Promise<T> {
    return fn(this.client);
  }
  close(): Promise<void> {
    return this.client.close();
  }
}

class RetiringClientPool implements ClientPool {
  private readonly idle: ClickHouseClient[] = [];
  private closed = false;

  constructor(
    private readonly create: () => Promise<ClickHouseClient>,
    private readonly maxIdle: number,
  ) {}

  async use<T>(fn: (client: ClickHouseClient) => Promise<T>): Promise<T> {
    if (this.closed) throw new QesError("backend_unavailable", "the ClickHouse backend is closed");
    const client = this.idle.pop() ?? (await this.create());
    let result: T;
    try {
      result = await fn(client);
    } catch (e) {
      // closing waits behind a call the engine still runs: do not hold the caller for it
      void client.close().catch(() => {});
      throw e;
    }
    if (this.closed || this.idle.length >= this.maxIdle) await client.close();
    else this.idle.push(client);
    return result;
  }

  async close(): Promise<void> {
    this.closed = true;
    const clients = this.idle.splice(0);
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
  }
}

// ---------------------------------------------------------------------------------------------
// Embedded chDB: one engine (one data directory) per process.

let chdbPath: string | null = null;
let chdbUsers = 0;

type ChdbClientConnection = NonNullable<NonNullable<Parameters<typeof createClient>[0]>["connection"]>;
type ChdbModule = { createChdbConnection(opts: { path: string }): unknown };

async function loadChdb(): Promise<ChdbModule> {
  // Loaded only when an embedded engine is opened: libchdb is ~0.5 GB of native code.
  const mod = (await import("chdb/connection")) as ChdbModule & { default?: ChdbModule };
  return typeof mod.createChdbConnection === "function" ? mod : mod.default!;
}

async function chdbClient(
  chdb: ChdbModule,
  path: string,
  database: string | null,
): Promise<ClickHouseClient> {
  const client = createClient({
    // query parameters go on the session: the binding's own path queues every call of the process
    connection: withSessionParams(chdb.createChdbConnection({ path }) as ChdbClientConnection),
  });
  await client.command({ query: SESSION_SETUP_SQL });
  if (database !== null) await client.command({ query: `USE ${quoteIdent(database)}` });
  return client;
}

function storeLocked(path: string, holder: string | undefined, cause?: unknown): QesError {
  return new QesError(
    "store_locked",
    `the embedded ClickHouse store ${path} is held by another process${holder ? ` (${holder})` : ""}, ` +
      "most likely a running qes server. chDB allows one process per directory: stop that server, or load " +
      "through it (qes load finds it), or use a ClickHouse server (QES_CLICKHOUSE_URL) to run several processes.",
    cause === undefined ? {} : { cause },
  );
}

/**
 * Opens the embedded engine at `path` (an absolute directory) for `database`, creating the
 * database. A second backend of this process may share the path (another database); another
 * path while one is open is refused, as chDB binds one data directory per process.
 */
export async function openChdbEngine(path: string, database: string): Promise<ClickhouseEngine> {
  if (chdbPath !== null && chdbPath !== path) {
    throw new QesError(
      "backend_unavailable",
      `embedded ClickHouse (chDB) runs one engine per process and it is open at ${chdbPath}; ` +
        `cannot also open ${path}. Use one QES_CLICKHOUSE_PATH per process, or a server (QES_CLICKHOUSE_URL).`,
    );
  }
  const holder = chdbHolder(path);
  if (holder !== undefined) throw storeLocked(path, `pid ${holder}`);
  let chdb: ChdbModule;
  try {
    chdb = await loadChdb();
  } catch (e) {
    throw new QesError(
      "backend_unavailable",
      `the embedded ClickHouse engine (npm package chdb) cannot be loaded: ${String(e)}`,
      { cause: e },
    );
  }
  chdbPath = path;
  chdbUsers++;
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    if (--chdbUsers === 0) chdbPath = null;
  };
  try {
    const bootstrap = await chdbClient(chdb, path, null);
    try {
      await bootstrap.command({ query: `CREATE DATABASE IF NOT EXISTS ${quoteIdent(database)}` });
    } finally {
      await bootstrap.close();
    }
  } catch (e) {
    release();
    const message = e instanceof Error ? e.message : String(e);
    // chDB reports a directory another process holds as "Failed to create connection for path"
    // (and "Another server instance in same directory is already running" on stderr)
    if (/Another server instance in same directory|Failed to create connection for path/.test(message)) {
      throw storeLocked(path, undefined, e);
    }
    throw new QesError("backend_unavailable", `cannot open embedded ClickHouse at ${path}: ${message}`, {
      cause: e,
    });
  }
  const owner = new RetiringClientPool(() => chdbClient(chdb, path, database), 1);
  const query = new RetiringClientPool(() => chdbClient(chdb, path, database), 4);
  return {
    kind: "chdb",
    database,
    owner,
    query,
    async close() {
      await query.close();
      await owner.close();
      release();
    },
  };
}

/** A client for a ClickHouse server URL (`http(s)://user:password@host:port/database`). */
export function httpClient(url: string, database: string): ClickHouseClient {
  return createClient({
    url,
    database,
    clickhouse_settings: HTTP_SETTINGS,
    // every query carries its own limits; a socket held open by a slow query must not outlive them
    request_timeout: 24 * 3600_000,
  });
}

/** The engine of a server or cluster: owner and query users over HTTP. */
export function openHttpEngine(ownerUrl: string, queryUrl: string, database: string): ClickhouseEngine {
  const owner = new SharedClientPool(httpClient(ownerUrl, database));
  const query = new SharedClientPool(httpClient(queryUrl, database));
  return {
    kind: "http",
    database,
    owner,
    query,
    async close() {
      await query.close();
      await owner.close();
    },
  };
}
