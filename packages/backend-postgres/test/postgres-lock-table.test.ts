import { isQesError, type QesError } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresBackend } from "../src/index.ts";
import { createPrivateCluster, type PrivateCluster } from "./private-cluster.ts";

/** one event on each of `days` days */
function* spreadOver(days: number): Generator<string> {
  for (let d = 0; d < days; d++) {
    yield JSON.stringify({
      id: `d${d}`,
      timestamp: new Date(Date.UTC(2020, 0, 1) + d * 86_400_000).toISOString(),
    });
  }
}

// a load takes locks on each day's partition and its indexes; a server with a small lock table
// stands in for thousands of days on the default one (3,000 days: "out of shared memory")
describe("a load over more days than PostgreSQL's lock table holds", () => {
  let cluster: PrivateCluster;
  beforeAll(async () => {
    cluster = await createPrivateCluster({ max_locks_per_transaction: "10", max_connections: "10" });
    await cluster.start();
  }, 60_000);
  afterAll(() => cluster.destroy());

  it("is refused naming the lock table and what to do, not reported as PostgreSQL being down", async () => {
    const backend = createPostgresBackend({ url: cluster.url, schema: "qes", pool: 2 });
    try {
      await backend.init();
      const error = await backend.load("backfill.logs", spreadOver(400)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isQesError(error)).toBe(true);
      expect((error as QesError).code).toBe("sql_too_complex");
      expect((error as QesError).message).toMatch(/lock table is full .*split a load by time/);
      // nothing of it was stored, and the server still answers
      expect((await backend.schema()).sources["backfill.logs"]).toBeUndefined();
      await backend.load("backfill.logs", spreadOver(3));
      expect(Object.keys((await backend.schema()).sources)).toContain("backfill.logs");
    } finally {
      await backend.close();
    }
  }, 120_000);
});
