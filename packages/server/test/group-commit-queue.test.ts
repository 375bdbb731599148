import { QesError } from "@qes/core";
import { describe, expect, it } from "vitest";
import { type CommittedBatch, GroupCommitQueue, type QueuedBatch } from "../src/ingest/group-commit-queue.ts";

/** a store whose commits finish when the test says so, recording what each call held */
function gatedStore() {
  const calls: QueuedBatch<number>[][] = [];
  const gates: (() => void)[] = [];
  let failWhen: ((batches: readonly QueuedBatch<number>[]) => boolean) | undefined;
  return {
    calls,
    open: () => gates.shift()?.(),
    failIf: (f: (batches: readonly QueuedBatch<number>[]) => boolean) => {
      failWhen = f;
    },
    commit: async (batches: readonly QueuedBatch<number>[]): Promise<CommittedBatch[]> => {
      calls.push([...batches]);
      await new Promise<void>((resolve) => gates.push(resolve));
      if (failWhen?.(batches)) throw new QesError("backend_unavailable", "disk full");
      return batches.map((b) => ({ source: b.source, stored: b.events.length, duplicates: 0 }));
    },
  };
}

const batch = (source: string, n: number): QueuedBatch<number> => ({
  source,
  events: Array.from({ length: n }, (_, i) => i),
});
const tick = () => new Promise((r) => setImmediate(r));

describe("group commit queue", () => {
  it("commits requests that arrive during a commit together, in one call, and answers each after it", async () => {
    const store = gatedStore();
    const queue = new GroupCommitQueue({ commit: store.commit, maxEvents: 100, retryAfterSeconds: 1 });
    const first = queue.submit(batch("a", 1));
    await tick();
    let settled = 0;
    const later = [queue.submit(batch("a", 2)), queue.submit(batch("b", 3)), queue.submit(batch("a", 4))];
    for (const p of later) void p.then(() => settled++);
    expect(store.calls).toHaveLength(1);
    store.open();
    expect(await first).toEqual({ source: "a", stored: 1, duplicates: 0 });
    await tick();
    expect(store.calls).toHaveLength(2);
    expect(store.calls[1]?.map((b) => [b.source, b.events.length])).toEqual([
      ["a", 2],
      ["b", 3],
      ["a", 4],
    ]);
    expect(settled).toBe(0);
    store.open();
    expect((await Promise.all(later)).map((r) => r.stored)).toEqual([2, 3, 4]);
    expect(queue.heldEvents).toBe(0);
  });

  it("refuses with 429 and Retry-After when the events waiting would pass the bound, and 413 for one batch larger than it", async () => {
    const store = gatedStore();
    const queue = new GroupCommitQueue({ commit: store.commit, maxEvents: 10, retryAfterSeconds: 2 });
    const held = queue.submit(batch("a", 6));
    const e = await queue.submit(batch("a", 5)).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(QesError);
    expect((e as QesError).code).toBe("too_many_requests");
    expect((e as QesError).retryAfterSeconds).toBe(2);
    const fits = queue.submit(batch("a", 4));
    expect(queue.full).toBe(true);
    expect(((await queue.submit(batch("a", 11)).catch((x: unknown) => x)) as QesError).code).toBe(
      "request_too_large",
    );
    store.open();
    await held;
    await tick();
    store.open();
    await fits;
    expect(queue.full).toBe(false);
    expect(store.calls.flat().reduce((n, b) => n + b.events.length, 0)).toBe(10);
  });

  it("when a grouped commit fails, commits each batch alone so only the failing one is refused", async () => {
    const store = gatedStore();
    store.failIf((batches) => batches.some((b) => b.source === "bad"));
    const queue = new GroupCommitQueue({ commit: store.commit, maxEvents: 100, retryAfterSeconds: 1 });
    const first = queue.submit(batch("a", 1));
    await tick();
    const good = queue.submit(batch("a", 2));
    const bad = queue.submit(batch("bad", 3)).catch((x: unknown) => x);
    store.open();
    await first;
    for (let i = 0; i < 3; i++) {
      await tick();
      store.open();
    }
    expect((await good).stored).toBe(2);
    expect(((await bad) as QesError).code).toBe("backend_unavailable");
  });

  it("close() waits for the commit under way and refuses new batches", async () => {
    const store = gatedStore();
    const queue = new GroupCommitQueue({ commit: store.commit, maxEvents: 100, retryAfterSeconds: 1 });
    let committed = false;
    const pending = queue.submit(batch("a", 1)).then(() => {
      committed = true;
    });
    let closed = false;
    const closing = queue.close().then(() => {
      closed = true;
    });
    await tick();
    expect(closed).toBe(false);
    expect(((await queue.submit(batch("a", 1)).catch((x: unknown) => x)) as QesError).code).toBe(
      "backend_unavailable",
    );
    store.open();
    await closing;
    await pending;
    expect(committed).toBe(true);
  });
});

describe("group commit queue, bounded in bytes", () => {
  it("refuses with 429 when the bodies waiting would pass the bound, takes one alone whatever its size, and frees the bytes at commit", async () => {
    const store = gatedStore();
    const queue = new GroupCommitQueue({
      commit: store.commit,
      maxEvents: 1000,
      maxBytes: 100,
      retryAfterSeconds: 3,
    });
    // one request of one event and the whole bound and more: alone, it is taken
    const big = queue.submit(batch("a", 1), 250);
    const e = await queue.submit(batch("a", 1), 1).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(QesError);
    expect((e as QesError).code).toBe("too_many_requests");
    expect((e as QesError).retryAfterSeconds).toBe(3);
    expect((e as QesError).message).toMatch(/250 bytes of requests waiting/);
    store.open();
    await big;
    await tick();
    expect(queue.heldBytes).toBe(0);
    // within the bound, several wait together
    const first = queue.submit(batch("a", 1), 40);
    await tick();
    const second = queue.submit(batch("a", 1), 40);
    const third = await queue.submit(batch("a", 1), 40).catch((x: unknown) => x);
    expect((third as QesError).code).toBe("too_many_requests");
    expect(queue.heldBytes).toBe(80);
    store.open();
    await first;
    await tick();
    store.open();
    await second;
    await tick();
    expect(queue.heldBytes).toBe(0);
  });
});
