import { IdFilter } from "@qes/core";
import type pg from "pg";
import { qualified } from "./postgres-sql.ts";
import { readWriteToken } from "./postgres-write-token.ts";

/**
 * The smallest filter built (~10 KB): a young source's fills after a few commits and is read
 * again at twice its ids, while a thousand sources hold ~10 MB between them.
 */
const MIN_CAPACITY = 8_192;
/** how long a build waits for its source's table before it gives up (and is tried again later) */
const BUILD_LOCK_TIMEOUT_MS = 2_000;
/** ids read per statement while a filter is built */
const BUILD_PAGE = 50_000;
/**
 * Sources with more ids than this get no filter (every id is probed in every partition, as
 * without one): ~1.2 bytes per id of memory, and the build reads every id once.
 */
const MAX_FILTERED_IDS = 25_000_000;
/** ids the filters of all sources of a process may hold together (~60 MB); beyond, no more are built */
const MAX_FILTERED_IDS_IN_ALL = 50_000_000;
/**
 * A source's filter is read from its table at most this often, but for its first read, after a
 * load of this process and when it fills: a filter another process's writes left behind, or a
 * source too large for one, costs one read a minute, not one per commit.
 */
const REBUILD_AFTER_MS = 60_000;
/**
 * The longest wait between reads of a source that another process keeps writing: each filter
 * found stale before it was ever trusted doubles the source's wait (two instances behind one load
 * balancer leave every filter stale at once, and read every id of the source for nothing).
 */
const MAX_REBUILD_AFTER_MS = 3_600_000;
/** links kept per filter while its token is behind them (a stale filter's chain is dropped) */
const MAX_LINKS = 1_024;

/**
 * One filter of a source's ids: it holds every id the source stored when its write token was
 * `token` (and may hold more: ids of rolled-back or retention-dropped rows only cost a probe).
 */
interface Filter {
  readonly ids: IdFilter;
  /** the write token whose ids it holds all of */
  token: string;
  /** write token before → after of each commit of this process whose ids were added to it */
  readonly links: Map<string, string>;
  /** a commit trusted it */
  used: boolean;
  /** found behind the source's token */
  stale: boolean;
}

/** What the commits of this process stored while a filter was being read from the table. */
interface Building {
  readonly ids: string[];
  readonly links: Map<string, string>;
  /** forgotten while it was read: its filter is not kept */
  discarded: boolean;
}

/** A commit's view of a source's filter, taken under the source's load lock. */
export interface StoredIdsCheck {
  readonly source: string;
  readonly table: string;
  /** the source's write token under the lock */
  readonly token: string | null;
  /** the filter, when it holds every id stored at `token` */
  readonly filter: Filter | undefined;
}

/**
 * Which ids of an ingest batch a PostgreSQL source stores already (DESIGN.md §10: retries never
 * duplicate), without looking each one up in every day partition's `id` index: with 90 days kept
 * that was ~470 ms per 5,000 ids, more than the COPY of the rows. A per-source Bloom filter of the
 * source's ids narrows a batch to the ids PostgreSQL is asked about.
 *
 * Other processes write the same tables, so a filter is trusted only while the source's write
 * token (postgres-write-token.ts) is the one it was built for or advanced to by this process's own
 * commits, whose ids it was given first; any other writer's commit replaces the token, and the
 * next commit probes every id, as without a filter, until a new one is built. The token is read
 * under the source's load lock, which every writer holds, so nothing is stored between that read
 * and the commit.
 */
export class PostgresStoredIds {
  readonly #filters = new Map<string, Filter>();
  readonly #building = new Map<string, Building>();
  readonly #nextBuild = new Map<string, number>();
  /** a source's wait between reads when it is not the base wait */
  readonly #rebuildAfter = new Map<string, number>();
  readonly #now: () => number;

  readonly #rebuildAfterMs: number;
  readonly #buildPage: number;
  readonly #maxIds: number;
  readonly #maxIdsInAll: number;

  constructor(
    private readonly pool: pg.Pool,
    private readonly schema: string,
    options: {
      rebuildAfterMs?: number;
      buildPage?: number;
      maxIds?: number;
      maxIdsInAll?: number;
      now?: () => number;
    } = {},
  ) {
    this.#now = options.now ?? Date.now;
    this.#rebuildAfterMs = options.rebuildAfterMs ?? REBUILD_AFTER_MS;
    this.#buildPage = options.buildPage ?? BUILD_PAGE;
    this.#maxIds = options.maxIds ?? MAX_FILTERED_IDS;
    this.#maxIdsInAll = options.maxIdsInAll ?? MAX_FILTERED_IDS_IN_ALL;
  }

  /** Reads the source's write token (caller holds the source's load lock) and checks the filter. */
  async check(client: pg.ClientBase, source: string, table: string): Promise<StoredIdsCheck> {
    const token = await readWriteToken(client, this.schema, source);
    const filter = this.#filters.get(source);
    const good = filter !== undefined && token !== null && filter.token === token;
    if (good) {
      filter.used = true;
      this.#rebuildAfter.delete(source);
    } else if (filter !== undefined && !filter.stale) {
      filter.stale = true;
      const wait = this.#rebuildAfter.get(source) ?? this.#rebuildAfterMs;
      if (!filter.used) this.#rebuildAfter.set(source, Math.min(2 * wait, MAX_REBUILD_AFTER_MS));
    }
    // with no token yet, a build now could only read the ids of no known token: after the commit
    if (!good && token !== null) this.#startBuild(source, table);
    return { source, table, token, filter: good ? filter : undefined };
  }

  /** The ids among `ids` the source stores (as one statement over the ids the filter keeps). */
  async stored(client: pg.ClientBase, check: StoredIdsCheck, ids: string[]): Promise<Set<string>> {
    const asked = check.filter === undefined ? ids : ids.filter((id) => check.filter!.ids.mightContain(id));
    if (asked.length === 0) return new Set();
    const { rows } = await client.query<{ id: string }>(
      `select id from ${qualified(this.schema, check.table)} where id = any($1::text[])`,
      [asked],
    );
    return new Set(rows.map((r) => r.id));
  }

  /**
   * After a commit that moved the source's write token from `before` to `after` and stored `ids`
   * (or a subset: more ids only cost probes): every filter of the source gets the ids, then
   * follows the link if it was at `before`.
   */
  committed(check: StoredIdsCheck, after: string, ids: Iterable<string>, rewrote = false): void {
    const { source, token: before } = check;
    // an ALTER COLUMN TYPE is not MVCC-safe: a build whose snapshot is older reads the rewritten
    // partitions as empty, and this commit's link would carry that filter to the current token
    if (rewrote) {
      this.forget(source);
      return;
    }
    const filter = this.#filters.get(source);
    const building = this.#building.get(source);
    for (const id of ids) {
      filter?.ids.add(id);
      building?.ids.push(id);
    }
    for (const links of before === null ? [] : [filter?.links, building?.links]) {
      if (links === undefined) continue;
      if (links.size >= MAX_LINKS) links.clear();
      links.set(before!, after);
    }
    if (filter !== undefined) advance(filter);
    if (filter?.ids.full) this.forget(source); // built again, larger, at once
    if (this.#filters.get(source)?.token !== after) this.#startBuild(source, check.table);
  }

  /**
   * Drops a source's filter, and the one being read, after a write of this process that did not
   * go through `committed` (a load) or that rewrote the table (`committed` with `rewrote`): it is
   * read again at once.
   */
  forget(source: string): void {
    this.#filters.delete(source);
    this.#nextBuild.delete(source);
    const building = this.#building.get(source);
    if (building === undefined) return;
    building.discarded = true;
    this.#building.delete(source);
  }

  /** Resolves when no filter is being built. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  /** Stops the builds under way (before the pool closes) and starts no more. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.settled();
  }

  readonly #pending = new Set<Promise<void>>();
  #stopped = false;
  /**
   * Builds run one at a time: each holds an owner connection for its whole read, or while it
   * waits for a table another session holds, and the owner pool counts one for them (a build
   * per source at once took every connection, and ingest failed waiting for one).
   */
  #turn: Promise<unknown> = Promise.resolve();

  #startBuild(source: string, table: string): void {
    if (this.#stopped || this.#building.has(source)) return;
    const now = this.#now();
    if (now < (this.#nextBuild.get(source) ?? 0)) return;
    this.#nextBuild.set(source, now + (this.#rebuildAfter.get(source) ?? this.#rebuildAfterMs));
    // registered before the build's snapshot: every commit after it is recorded here
    const building: Building = { ids: [], links: new Map(), discarded: false };
    this.#building.set(source, building);
    const built = this.#turn.then(() => this.#build(source, table));
    this.#turn = built.catch(() => undefined);
    const done = built
      .then((filter) => {
        if (filter === undefined || building.discarded) return;
        for (const id of building.ids) filter.ids.add(id);
        for (const [before, after] of building.links) filter.links.set(before, after);
        advance(filter);
        this.#filters.set(source, filter);
      })
      .catch(() => undefined) // an optimisation only: until it is built, commits probe every id
      .finally(() => {
        if (this.#building.get(source) === building) this.#building.delete(source);
        this.#pending.delete(done);
      });
    this.#pending.add(done);
  }

  /** the capacity of every source's filter but `source`'s */
  #heldCapacity(source: string): number {
    let held = 0;
    for (const [name, filter] of this.#filters) if (name !== source) held += filter.ids.capacity;
    return held;
  }

  /**
   * Reads the source's write token and then every id, in one snapshot (REPEATABLE READ), on a
   * connection of its own: writers are not held up while a large source is read.
   */
  async #build(source: string, table: string): Promise<Filter | undefined> {
    if (this.#stopped) return undefined; // its turn came after `stop`
    const client = await this.pool.connect();
    let broken = false;
    try {
      await client.query("begin isolation level repeatable read read only");
      // a table someone holds (a long ALTER, an operator's LOCK or VACUUM FULL) ends this build,
      // tried again later, instead of holding the one connection builds take turns on
      await client.query(`set local lock_timeout = '${BUILD_LOCK_TIMEOUT_MS}ms'`);
      const t = qualified(this.schema, table);
      const token = await readWriteToken(client, this.schema, source);
      // no token: written only by a version without tokens, whose writes nothing would notice
      if (token === null) return undefined;
      const { rows } = await client.query<{ n: string }>(`select count(*) as n from ${t}`);
      const count = Number(rows[0]!.n);
      const capacity = Math.max(MIN_CAPACITY, 2 * count);
      if (count > this.#maxIds || this.#heldCapacity(source) + capacity > this.#maxIdsInAll) return undefined;
      const ids = new IdFilter(capacity);
      await eachStoredId(client, this.schema, table, (id) => ids.add(id), {
        page: this.#buildPage,
        stopped: () => this.#stopped,
      });
      return { ids, token, links: new Map(), used: false, stale: false };
    } finally {
      // read only: ending it by rollback, whatever happened, leaves nothing behind
      await client.query("rollback").catch(() => {
        broken = true;
      });
      client.release(broken);
    }
  }
}

/**
 * Calls `add` with every id of a source's table, read in pages in id order (through the id
 * index), in the client's transaction: a filter built by ingest, or by a load (LoadIds).
 */
export async function eachStoredId(
  client: pg.ClientBase,
  schema: string,
  table: string,
  add: (id: string) => void,
  options: { page?: number; stopped?: () => boolean } = {},
): Promise<void> {
  const t = qualified(schema, table);
  const size = options.page ?? BUILD_PAGE;
  let after: string | null = null;
  for (;;) {
    if (options.stopped?.()) throw new Error("closing");
    const page: pg.QueryArrayResult<[string]> = await client.query<[string]>({
      text:
        after === null
          ? `select id from ${t} order by id limit $1`
          : `select id from ${t} where id > $2 order by id limit $1`,
      values: after === null ? [size] : [size, after],
      rowMode: "array",
    });
    for (const [id] of page.rows) add(id);
    if (page.rows.length < size) return;
    after = page.rows[page.rows.length - 1]![0];
  }
}

/** follows the filter's links from its token: each is a commit whose ids it holds */
function advance(filter: Filter): void {
  for (let next = filter.links.get(filter.token); next !== undefined; next = filter.links.get(filter.token)) {
    filter.links.delete(filter.token);
    filter.token = next;
  }
}
