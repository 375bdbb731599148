import pino from "pino";
import { describe, expect, it } from "vitest";
import type { CacheEntry } from "../src/cache/cache-entry.ts";
import { MemoryStore } from "../src/cache/memory-store.ts";
import { ResultCache } from "../src/cache/result-cache.ts";
import { Metrics } from "../src/observability/metrics.ts";

const entry = (text: string): CacheEntry => ({
  body: Buffer.from(text),
  storedAtMs: 0,
  rowLimitReached: false,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cache = () =>
  new ResultCache({
    store: new MemoryStore(100),
    metrics: new Metrics({ backend: "duckdb", executedQueries: () => 0, redis: false }),
    logger: pino({ level: "silent" }),
    peerWaitMs: 1000,
  });

describe("identical concurrent misses", () => {
  it("ask admission once: requests that arrive while the first waits for a slot join its flight", async () => {
    const results = cache();
    let admitted = 0;
    let produced = 0;
    // a slot that takes a while: without the flight existing during admission, each request would
    // ask for a slot of its own (and a caller's short queue would refuse most of them with 429)
    const admit = async () => {
      admitted++;
      await sleep(30);
      return () => undefined;
    };
    const produce = async () => {
      produced++;
      await sleep(10);
      return entry("rows");
    };
    const answers = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        await sleep(i % 5);
        return results.answer("e", "k", 60_000, produce, { admit, signal: new AbortController().signal });
      }),
    );
    expect(admitted).toBe(1);
    expect(produced).toBe(1);
    expect(new Set(answers.map((a) => a.entry.body.toString()))).toEqual(new Set(["rows"]));
  });

  it("share a refusal by admission, and a later request asks again", async () => {
    const results = cache();
    let admitted = 0;
    const refuse = async () => {
      admitted++;
      await sleep(10);
      throw Object.assign(new Error("busy"), { code: "too_many_requests" });
    };
    const produce = async () => entry("rows");
    const replies = await Promise.allSettled(
      Array.from({ length: 5 }, () => results.answer("e", "k", 60_000, produce, { admit: refuse })),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(5).fill("rejected"));
    expect(admitted).toBe(1);
    const again = await results.answer("e", "k", 60_000, produce, { admit: async () => () => undefined });
    expect(again.cache).toBe("MISS");
  });

  it("end the wait for a slot when every request waiting for the query has gone", async () => {
    const results = cache();
    let waitEnded: unknown;
    const admit = (signal: AbortSignal) =>
      new Promise<() => void>((_, reject) => {
        signal.addEventListener("abort", () => {
          waitEnded = signal.reason;
          reject(signal.reason);
        });
      });
    const clients = [new AbortController(), new AbortController()];
    const replies = clients.map((c) =>
      results.answer("e", "k", 60_000, async () => entry("rows"), { admit, signal: c.signal }),
    );
    clients[0]?.abort(new Error("first gone"));
    await expect(replies[0]).rejects.toThrow("first gone");
    expect(waitEnded).toBeUndefined();
    clients[1]?.abort(new Error("second gone"));
    await expect(replies[1]).rejects.toThrow("second gone");
    expect(waitEnded).toBeInstanceOf(Error);
  });
});
