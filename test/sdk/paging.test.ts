import { createClient, type LogRow, microsToIso, QesApiError, type QesClient } from "@qes/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer, TOKEN } from "../e2e/support/test-server.ts";

/**
 * 2,500 edge rows of project "pager" in groups that share one microsecond (sizes cycling 1, 3, 2,
 * 7, 1, 4), so page boundaries fall inside groups, plus one crowded microsecond of 250 rows — more
 * than a page — in the middle. Every other row is a POST.
 */
const BASE_US = Date.parse("2025-01-15T10:00:00Z") * 1000;
const SIZES = [1, 3, 2, 7, 1, 4];
const CROWDED_US = BASE_US + 250_123;

interface Event {
  id: string;
  timestamp: number;
}

function makeEvents(): Event[] {
  const events: Event[] = [];
  let us = BASE_US;
  for (let g = 0; events.length < 2500; g++) {
    const size = SIZES[g % SIZES.length]!;
    for (let i = 0; i < size && events.length < 2500; i++) {
      events.push({ id: `p-${String(events.length).padStart(5, "0")}`, timestamp: us });
    }
    us += 137 + (g % 5) * 250; // 137–1,137 µs apart
    if (us >= CROWDED_US && us < CROWDED_US + 1000) us = CROWDED_US + 1000;
  }
  for (let i = 0; i < 250; i++) events.push({ id: `c-${String(i).padStart(3, "0")}`, timestamp: CROWDED_US });
  return events;
}

const EVENTS = makeEvents();
const NEWEST_US = Math.max(...EVENTS.map((e) => e.timestamp));
const line = (e: Event, n: number) => {
  const method = n % 2 === 0 ? "POST" : "GET";
  return JSON.stringify({
    id: e.id,
    timestamp: e.timestamp,
    project: "pager",
    event_message: `${method} | 200 | /rest/v1/t`,
    metadata: { request: { method, path: "/rest/v1/t" } },
  });
};

/** the ids in the order a perfect walk yields them: newest first (ties in any order) */
const byTimeDesc = (events: Event[]) => [...events].sort((a, b) => b.timestamp - a.timestamp);

let server: TestServer;
let wireRows = 0;
let requests = 0;
let qes: QesClient;

beforeAll(async () => {
  server = await startTestServer({
    loads: { "cloudflare.logs.prod": EVENTS.map(line) },
  });
  qes = createClient({
    baseUrl: server.url,
    apiKey: TOKEN,
    retries: 0,
    fetch: async (input, init) => {
      requests++;
      const res = await fetch(input, init);
      const text = await res.clone().text();
      wireRows += (JSON.parse(text) as { result?: unknown[] }).result?.length ?? 0;
      return res;
    },
  });
});
afterAll(async () => {
  await server?.close();
});

async function walk(iterable: AsyncIterable<LogRow>): Promise<LogRow[]> {
  const rows: LogRow[] = [];
  for await (const row of iterable) rows.push(row);
  return rows;
}

function expectExactWalk(rows: LogRow[], expected: Event[]) {
  const ids = rows.map((r) => r.id);
  expect(new Set(ids).size).toBe(ids.length); // no duplicates
  expect(ids.length).toBe(expected.length); // no gaps
  expect(new Set(ids)).toEqual(new Set(expected.map((e) => e.id)));
  for (let i = 1; i < rows.length; i++)
    expect(rows[i]!.timestamp).toBeLessThanOrEqual(rows[i - 1]!.timestamp);
  const want = byTimeDesc(expected).map((e) => e.timestamp);
  expect(rows.map((r) => r.timestamp)).toEqual(want);
}

describe("iterateLogs", () => {
  it("walks 2,750 rows in pages of 100 (plain logs.all) without gaps or duplicates", async () => {
    wireRows = 0;
    requests = 0;
    const rows = await walk(qes.iterateLogs({ project: "pager" }));
    expectExactWalk(rows, EVENTS);
    // page boundaries fell inside shared microseconds: rows came twice on the wire and were dropped
    expect(wireRows).toBeGreaterThan(rows.length);
    expect(requests).toBeGreaterThan(27);
    expect(Object.keys(rows[0]!)).toEqual(["id", "timestamp", "event_message", "metadata"]);
  });

  it.each([11, 37, 250, 1000])("walks every row with pageSize %i (consumer SQL pages)", async (pageSize) => {
    const rows = await walk(qes.iterateLogs({ project: "pager" }, { pageSize }));
    expectExactWalk(rows, EVENTS);
  });

  it("reads a microsecond shared by more than a page by id, then goes on", async () => {
    // 250 rows in one µs, pages of 100: the walk cannot pass it with iso_timestamp_end alone
    const rows = await walk(
      qes.iterateLogs(
        { project: "pager", isoTimestampEnd: microsToIso(CROWDED_US + 5000) },
        { pageSize: 100 },
      ),
    );
    const expected = EVENTS.filter((e) => e.timestamp <= CROWDED_US + 5000);
    expectExactWalk(rows, expected);
    const crowded = rows.filter((r) => r.timestamp === CROWDED_US);
    expect(crowded).toHaveLength(250);
    expect(NEWEST_US - CROWDED_US).toBeGreaterThan(100_000); // the crowd is in the middle of the data
    expect(rows.findIndex((r) => r.timestamp === CROWDED_US)).toBeGreaterThan(0); // newer rows first: a page boundary falls inside the crowd
  });

  it("honours the range of the parameters: start exclusive, end inclusive (µs kept)", async () => {
    const sorted = byTimeDesc(EVENTS);
    const end = sorted[300]!.timestamp;
    const start = sorted[1700]!.timestamp;
    const rows = await walk(
      qes.iterateLogs({
        project: "pager",
        isoTimestampStart: microsToIso(start),
        isoTimestampEnd: microsToIso(end),
      }),
    );
    expectExactWalk(
      rows,
      EVENTS.filter((e) => e.timestamp > start && e.timestamp <= end),
    );
  });

  it("filters with `where` over edge_logs and still walks every match", async () => {
    const rows = await walk(
      qes.iterateLogs(
        { project: "pager" },
        { pageSize: 100, where: "regexp_contains(event_message, '^POST')" },
      ),
    );
    const posts = EVENTS.filter((_e, n) => n % 2 === 0);
    expectExactWalk(rows, posts);
  });

  it("stops early when the consumer breaks out, and rejects a bad page size", async () => {
    requests = 0;
    let n = 0;
    for await (const _row of qes.iterateLogs({ project: "pager" })) if (++n === 150) break;
    expect(requests).toBe(2);
    await expect(walk(qes.iterateLogs({ project: "pager" }, { pageSize: 1001 }))).rejects.toThrow(RangeError);
  });

  it("passes a bad bound on as QesApiError, and an abort as the signal's reason", async () => {
    await expect(walk(qes.iterateLogs({ project: "pager", isoTimestampEnd: "soon" }))).rejects.toBeInstanceOf(
      QesApiError,
    );
    const controller = new AbortController();
    const iterator = qes.iterateLogs({ project: "pager" }, { signal: controller.signal });
    await iterator.next();
    controller.abort();
    for (let i = 0; i < 99; i++) await iterator.next(); // the rest of the first page is in hand
    await expect(iterator.next()).rejects.toMatchObject({ name: "AbortError" });
  });
});
