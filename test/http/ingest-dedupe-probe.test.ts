import { describe, expect, it } from "vitest";
import {
  createPostgresBackend,
  dropPostgresStorage,
  type PostgresBackend,
} from "../../packages/backend-postgres/src/index.ts";
import { postLogs, storedIds } from "./support/ingest.ts";
import { serversOnOneStore } from "./support/ingest-workers.ts";
import { TEST_POSTGRES_URL } from "./support/stores.ts";

/**
 * Two qes servers on one PostgreSQL schema (one parsing bodies on its ingest worker, one on its
 * main thread), each with its own filter of stored ids: a body retried on either is stored once.
 */
describe("POST /api/logs retried across two servers on one PostgreSQL schema", () => {
  const schema = `qes_http_dedupe_probe_${process.pid}_${Date.now().toString(36)}`;
  const { backends, servers } = serversOnOneStore(
    async () => {
      const backend = createPostgresBackend({ url: TEST_POSTGRES_URL, schema, pool: 2 });
      await backend.init();
      return backend;
    },
    () => dropPostgresStorage(TEST_POSTGRES_URL, schema),
  );

  it("ids sent with escapes PostgreSQL cannot store as sent (NUL, lone surrogates), repeated within a body, stored once", async () => {
    const source = "probe.http";
    // as JSON text: each escape reaches the server as sent
    const odd = ["\\u0000nul", "lone\\ud800", "lone\\udc00x", "pair\\ud83d\\ude00", "case", "CASE", "tab\\t"];
    const body = (round: number) =>
      `[${[...odd, ...odd, `r${round}`]
        .map((id) => `{"id":"${id}","timestamp":"2025-01-14T10:00:00Z","event_message":"m"}`)
        .join(",")}]`;
    for (let round = 0; round < 8; round++) {
      // the same body to both servers at once, then again to each in turn
      const posted = await Promise.all(servers.map((s) => postLogs(s.url, source, body(round))));
      expect(posted.map((p) => p.status)).toEqual([200, 200]);
      for (const s of servers) expect((await postLogs(s.url, source, body(round))).status).toBe(200);
      if (round % 3 === 2)
        await Promise.all(backends.map((b) => (b as PostgresBackend)["storedIds"].settled()));
    }
    const ids = await storedIds(backends[0]!, source);
    expect(ids.length).toBe(odd.length + 8);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
