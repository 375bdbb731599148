import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PostgresBackend } from "../src/index.ts";
import { freshBackend, handQuery, scalar } from "./helpers.ts";

/**
 * Issue 12, found by the soak: a well-behaved request was answered 504 `query_timeout` in no time.
 * A cancel request names a server process, not a query: an abort that came as its query ended
 * sent the cancel after the connection had gone back to the pool, and PostgreSQL cancelled
 * whatever that process ran next — another caller's query.
 */
describe("a cancel sent for an abandoned query", () => {
  let backend: PostgresBackend;
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    // one connection: the next query always runs on the process the cancel names
    ({ backend, dispose } = await freshBackend("cancelrace", { pool: 1 }));
  });
  afterAll(async () => {
    await dispose?.();
  });

  it("never cancels the next query on the same connection", async () => {
    const short = handQuery("select 1 as n from pg_sleep(0.002)", [scalar("n", "INT64")]);
    const next = handQuery("select 2 as n from pg_sleep(0.03)", [scalar("n", "INT64")]);
    const opts = { maxRows: 1, timeoutMs: 10_000 };
    const failures: unknown[] = [];
    for (let i = 0; i < 60; i++) {
      const gone = new AbortController();
      // abandoned around the moment it ends: sometimes before, sometimes after the server answered
      const abandoned = backend.execute(short, [], { ...opts, signal: gone.signal }).catch(() => undefined);
      setTimeout(() => gone.abort(new Error("client gone")), 1 + (i % 4));
      // asked at once: it waits for the one connection and runs on it next
      const answer = await backend.execute(next, [], opts).catch((e: unknown) => e);
      await abandoned;
      if (!(typeof answer === "object" && answer !== null && "rows" in answer)) failures.push(answer);
    }
    expect(failures).toEqual([]);
  });
});
