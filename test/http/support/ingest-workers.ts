import type { Backend } from "@qes/core";
import { afterAll, beforeAll } from "vitest";
import { BACKENDS, type BackendFixture } from "../../support/backends.ts";
import { runSql } from "../../support/run-sql.ts";
import { type ServedFixture, serveFixture } from "../../support/serve-fixture.ts";
import { type HttpServer, startHttpServer } from "./in-process.ts";
import { ingestEnv, QUERY_TOKEN } from "./ingest.ts";

/** the backends that encode ingest rows on the server's ingest worker (`Backend.ingestPreparer`): all three */
export const PREPARING = BACKENDS;

/** `fixture`'s backend with `ingestPreparer` set to `preparer` (undefined: the main thread parses every body) */
export function withPreparer(fixture: BackendFixture, preparer: string | undefined): BackendFixture {
  return {
    name: fixture.name,
    async create() {
      const handle = await fixture.create();
      Object.defineProperty(handle.backend, "ingestPreparer", { value: preparer });
      return handle;
    },
  };
}

export interface ServedPair {
  /** parses bodies on its ingest worker */
  worker: ServedFixture;
  /** parses every body on its main thread */
  main: ServedFixture;
}

/**
 * Two servers over fresh stores of `fixture`, one parsing on its ingest worker and one on its main
 * thread, started before the suite's tests and closed after them (call inside `describe`).
 */
export function servedPair(fixture: BackendFixture, env: Record<string, string>): ServedPair {
  const pair = {} as ServedPair;
  beforeAll(async () => {
    pair.worker = await serveFixture(fixture, {}, env);
    pair.main = await serveFixture(withPreparer(fixture, undefined), {}, env);
  }, 60_000);
  afterAll(async () => {
    await pair.worker?.close();
    await pair.main?.close();
  });
  return pair;
}

/**
 * Two servers on one store (two instances): `open` gives each its own backend on it; the first
 * parses bodies on its ingest worker, the second on its main thread. Started before the suite's
 * tests, closed after them, then `dispose` (call inside `describe`).
 */
export function serversOnOneStore(
  open: () => Promise<Backend>,
  dispose: () => Promise<void> = async () => undefined,
): { backends: Backend[]; servers: HttpServer[] } {
  const pair = { backends: [] as Backend[], servers: [] as HttpServer[] };
  beforeAll(async () => {
    for (const worker of [true, false]) {
      const backend = await open();
      if (!worker) Object.defineProperty(backend, "ingestPreparer", { value: undefined });
      pair.backends.push(backend);
      pair.servers.push(await startHttpServer(backend, ingestEnv()));
    }
  }, 60_000);
  afterAll(async () => {
    for (const s of pair.servers) await s.close();
    for (const b of pair.backends) await b.close();
    await dispose();
  });
  return pair;
}

/** every stored column of a source, ordered (none when the store lacks it) */
export async function storedRows(served: ServedFixture, source: string): Promise<unknown[]> {
  if ((await served.backend.schema()).sources[source] === undefined) return [];
  return runSql(served.backend, `select * from \`${source}\` order by timestamp, id`);
}

/** `qes_ingest_bodies_parsed_total` by thread */
export async function parsedOn(served: ServedFixture): Promise<Record<string, number>> {
  const text = await (await fetch(`${served.url}/metrics`, { headers: { "x-api-key": QUERY_TOKEN } })).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^qes_ingest_bodies_parsed_total\{thread="(\w+)"[^}]*\} (\d+)/gm))
    out[m[1]!] = Number(m[2]);
  return out;
}
