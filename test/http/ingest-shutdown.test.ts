import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { serveFixture } from "../support/serve-fixture.ts";
import { event, ingestEnv, postLogs, storedIds } from "./support/ingest.ts";

/**
 * Graceful shutdown drains the ingest queue: requests in flight when the service closes are
 * committed and answered; none acknowledged is lost, and the store holds nothing unacknowledged
 * beyond what was committed for a client that went away.
 */
describe.each(BACKENDS)("closing the service while clients ingest on $name", (fixture) => {
  it("commits and answers every request it accepted", async () => {
    const served = await serveFixture(fixture, {}, ingestEnv());
    const { backend } = served;
    try {
      const posts = Array.from({ length: 12 }, (_, c) =>
        postLogs(
          served.url,
          "drain.src",
          JSON.stringify(Array.from({ length: 40 }, (_, i) => event(`c${c}-${i}`, "drain"))),
        ).then(
          (r) => ({ c, status: r.status }),
          () => ({ c, status: 0 }),
        ),
      );
      // close as soon as the first request is acknowledged, with the others in flight
      await Promise.race(posts);
      await served.service.close();
      const results = await Promise.all(posts);
      const acked = results.filter((r) => r.status === 200);
      expect(acked.length).toBeGreaterThan(0);
      for (const r of results) expect([0, 200, 503]).toContain(r.status);
      const stored = new Set(await storedIds(backend, "drain.src"));
      for (const { c } of acked) {
        for (let i = 0; i < 40; i++) expect(stored.has(`c${c}-${i}`)).toBe(true);
      }
    } finally {
      await served.close();
    }
  });
});
