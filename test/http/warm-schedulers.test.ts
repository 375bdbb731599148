import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EDGE_EVENTS } from "./support/events.ts";
import { type HttpServer, startHttpServer } from "./support/in-process.ts";
import { duckdbStore, type Store, unique } from "./support/stores.ts";

/**
 * BullMQ job schedulers left in Redis by an earlier deployment: a start-up removes the warming
 * schedulers of endpoints it does not warm (removed, or no longer warmed) and keeps its own and
 * anything that is not a warming scheduler.
 */
const PREFIX = `${unique("qes_sched")}:`;
const USAGE_ID = "0b1e7d52-8f3a-4e6c-a1d9-5c2f7e804b63";
const GONE_ID = "5a0c3e1d-0000-4000-8000-00000000dead";
let store: Store;
let server: HttpServer;
let queue: Queue;

beforeAll(async () => {
  store = await duckdbStore({ "cloudflare.logs.prod": EDGE_EVENTS });
  queue = new Queue("warm", { connection: { host: "127.0.0.1", port: 6379 }, prefix: `${PREFIX}bull` });
  const template = { name: "left over", data: { endpointId: GONE_ID } };
  await queue.upsertJobScheduler(`warm:${GONE_ID}`, { every: 3_600_000 }, template);
  await queue.upsertJobScheduler("nightly-report", { every: 3_600_000 }, { name: "not ours" });
  server = await startHttpServer(store.backend, {
    QES_REDIS_URL: "redis://127.0.0.1:6379",
    QES_REDIS_PREFIX: PREFIX,
  });
});
afterAll(async () => {
  await server?.close();
  await store?.dispose();
  if (queue) {
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
  }
});

describe("warming schedulers", () => {
  it("removes a removed endpoint's scheduler at start-up and keeps the rest", async () => {
    const deadline = Date.now() + 10_000;
    let ids: string[] = [];
    while (Date.now() < deadline) {
      ids = (await queue.getJobSchedulers()).map((s) => s.key).sort();
      if (!ids.includes(`warm:${GONE_ID}`) && ids.includes(`warm:${USAGE_ID}`)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(ids).toContain(`warm:${USAGE_ID}`);
    expect(ids).toContain("nightly-report");
    expect(ids).not.toContain(`warm:${GONE_ID}`);
    const line = server
      .logs()
      .split("\n")
      .find((l) => l.includes('"warming scheduled"'));
    expect(JSON.parse(line as string).removed).toEqual([`warm:${GONE_ID}`]);
  });
});
