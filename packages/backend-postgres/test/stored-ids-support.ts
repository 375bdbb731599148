import type pg from "pg";
import { afterAll, afterEach, beforeAll } from "vitest";
import { createPostgresBackend, type PostgresBackend } from "../src/index.ts";
import { PostgresStoredIds, type StoredIdsCheck } from "../src/postgres-stored-ids.ts";
import { dropStorage, ownerQuery, TEST_POSTGRES_URL, tableOf, uniqueSchema } from "./helpers.ts";

export type StoredIdsOptions = ConstructorParameters<typeof PostgresStoredIds>[2];

export const range = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

/** Records, per probe, whether the filter was trusted and how many ids PostgreSQL was asked about. */
export class RecordingStoredIds extends PostgresStoredIds {
  readonly probes: { trusted: boolean; ids: number; asked: number }[] = [];
  override async stored(client: pg.ClientBase, check: StoredIdsCheck, ids: string[]): Promise<Set<string>> {
    const asked =
      check.filter === undefined ? ids.length : ids.filter((id) => check.filter!.ids.mightContain(id)).length;
    this.probes.push({ trusted: check.filter !== undefined, ids: ids.length, asked });
    return super.stored(client, check, ids);
  }
  /** whether each probe trusted the filter */
  get trusted(): boolean[] {
    return this.probes.map((p) => p.trusted);
  }
  last() {
    return this.probes[this.probes.length - 1]!;
  }
}

/** Gives `backend` a fresh filter of ids (none built yet), its builds connecting through `pool`. */
export function recorded(
  backend: PostgresBackend,
  options: StoredIdsOptions = {},
  pool: pg.Pool = backend["ownerPool"],
): RecordingStoredIds {
  const ids = new RecordingStoredIds(pool, backend["config"].schema, options);
  Object.assign(backend, { storedIds: ids });
  return ids;
}

/** `recorded`, with builds that connect once `open` is called. */
export function gatedStoredIds(backend: PostgresBackend, options: StoredIdsOptions = {}) {
  const pool: pg.Pool = backend["ownerPool"];
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const gated = {
    connect: async () => {
      await gate;
      return pool.connect();
    },
  } as unknown as pg.Pool;
  return { ids: recorded(backend, options, gated), open };
}

/**
 * Two backends (two instances) on one fresh schema, opened before the suite's tests and closed,
 * the schema dropped, after them; no filter build is left running between tests (call inside
 * `describe`).
 */
export function twoInstances(prefix: string): { schema: string; a: PostgresBackend; b: PostgresBackend } {
  const pair = { schema: uniqueSchema(prefix) } as { schema: string; a: PostgresBackend; b: PostgresBackend };
  beforeAll(async () => {
    pair.a = createPostgresBackend({ url: TEST_POSTGRES_URL, schema: pair.schema, pool: 2 });
    await pair.a.init();
    pair.b = createPostgresBackend({ url: TEST_POSTGRES_URL, schema: pair.schema, pool: 2 });
    await pair.b.init();
  });
  afterAll(async () => {
    await pair.a.close();
    await pair.b.close();
    await dropStorage(pair.schema);
  });
  afterEach(async () => {
    await pair.a["storedIds"].settled();
    await pair.b["storedIds"].settled();
  });
  return pair;
}

/** id → rows a source stores with it, for the ids given */
export async function storedCounts(
  backend: PostgresBackend,
  source: string,
  ids: string[],
): Promise<Map<string, number>> {
  const { rows } = await ownerQuery<{ id: string; n: string }>(
    `select id, count(*) as n from ${await tableOf(backend, source)} where id = any($1) group by id`,
    [ids],
  );
  return new Map(rows.map((r) => [r.id, Number(r.n)]));
}
