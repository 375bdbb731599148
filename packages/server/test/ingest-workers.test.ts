import { newSourceSchema, QesError } from "@qes/core";
import { afterEach, describe, expect, it } from "vitest";
import { IngestWorkers } from "../src/ingest/ingest-workers.ts";
import { requestEvents } from "../src/ingest/request-events.ts";

const SOURCE = "w.logs";
const NOW = 1_736_942_400_000_000n;
const echo = new URL("./fixtures/preparers/echo-preparer.ts", import.meta.url).href;
const failing = new URL("./fixtures/preparers/failing-preparer.ts", import.meta.url).href;
const body = (messages: string[]) =>
  Buffer.from(
    JSON.stringify(
      messages.map((m, i) => ({ id: `i${i}`, timestamp: "2025-01-15T10:00:00Z", event_message: m })),
    ),
  );

function request(b: Buffer, format: "json" | "ndjson" = "json") {
  return {
    body: b,
    format,
    source: SOURCE,
    nowMicros: NOW,
    maxEvents: 1000,
    schema: newSourceSchema(SOURCE),
  };
}

describe("IngestWorkers", () => {
  let workers: IngestWorkers | undefined;
  afterEach(async () => {
    await workers?.close();
    workers = undefined;
  });

  it("hands back the ids and the preparer's rows of a covered body, in order", async () => {
    workers = new IngestWorkers(echo, 1);
    const prepared = await workers.prepare(request(body(["a", "b", "c"])));
    expect(prepared?.ids).toEqual(["i0", "i1", "i2"]);
    expect(prepared?.rows).toEqual(["a", "b", "c"]);
    expect(prepared?.fields).toBe(JSON.stringify(newSourceSchema(SOURCE).fields));
    // the caller's body is its own still: a copy went to the worker
    expect(JSON.parse(request(body(["a"])).body.toString())[0].event_message).toBe("a");
  });

  it("leaves a body with a field the schema lacks to the caller", async () => {
    workers = new IngestWorkers(echo, 1);
    const b = Buffer.from(JSON.stringify([{ event_message: "x", metadata: { new_field: 1 } }]));
    expect(await workers.prepare(request(b))).toBeUndefined();
  });

  it("refuses a bad body with the refusal the main thread's parsing gives", async () => {
    workers = new IngestWorkers(echo, 1);
    const bad = [
      Buffer.from('[{"event_message": "a"}, "text"]'),
      Buffer.from('{"event_message": "a"}\n{"event_message": '),
      Buffer.from([0xff, 0xfe, 0x00]),
      Buffer.from(JSON.stringify(Array.from({ length: 1001 }, () => ({ event_message: "m" })))),
    ];
    for (const [i, b] of bad.entries()) {
      const format = i === 1 ? "ndjson" : "json";
      let expected: unknown;
      try {
        requestEvents(b, format, SOURCE, NOW, 1000);
      } catch (e) {
        expected = e;
      }
      expect(expected).toBeInstanceOf(QesError);
      const got = await workers.prepare(request(b, format)).catch((e: unknown) => e);
      expect(got).toBeInstanceOf(QesError);
      const { code, message, line } = got as QesError;
      const want = expected as QesError;
      expect({ code, message, line }).toEqual({ code: want.code, message: want.message, line: want.line });
    }
  });

  it("a preparer that throws or ends its thread leaves the body to the caller, and a new worker takes the next", async () => {
    workers = new IngestWorkers(failing, 1);
    expect(await workers.prepare(request(body(["ok", "throw"])))).toBeUndefined();
    expect(await workers.prepare(request(body(["exit"])))).toBeUndefined();
    // a success in between: the count of failures starts again
    expect((await workers.prepare(request(body(["fine"]))))?.rows).toEqual(["fine"]);
    expect(await workers.prepare(request(body(["exit"])))).toBeUndefined();
    expect((await workers.prepare(request(body(["again"]))))?.rows).toEqual(["again"]);
  });

  it("a worker that does not answer in time is ended: its bodies, and the next, are the caller's or a new worker's", async () => {
    workers = new IngestWorkers(failing, 1, 1000);
    // the thread started: an answer within the time
    expect((await workers.prepare(request(body(["warm"]))))?.rows).toEqual(["warm"]);
    const started = performance.now();
    const [hung, queued] = await Promise.all([
      workers.prepare(request(body(["hang"]))),
      workers.prepare(request(body(["behind"]))),
    ]);
    expect(hung).toBeUndefined();
    expect(queued).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(5000);
    expect((await workers.prepare(request(body(["after"]))))?.rows).toEqual(["after"]);
  }, 20_000);

  it("times a request from when its thread has loaded: a slow start is not a thread that does not answer", async () => {
    const slow = new URL("./fixtures/preparers/slow-loading-worker.mjs", import.meta.url);
    workers = new IngestWorkers(echo, 1, 1000, undefined, slow);
    // the thread takes over 1.5 s to load, past the second the answer may take once it has
    expect((await workers.prepare(request(body(["first"]))))?.rows).toEqual(["first"]);
    expect((await workers.prepare(request(body(["second"]))))?.rows).toEqual(["second"]);
  }, 20_000);

  it("after three failures in a row starts no more workers: every body is the caller's", async () => {
    workers = new IngestWorkers("file:///nonexistent/preparer.ts", 1);
    for (let i = 0; i < 3; i++) expect(await workers.prepare(request(body(["a"])))).toBeUndefined();
    const started = performance.now();
    expect(await workers.prepare(request(body(["a"])))).toBeUndefined();
    // answered without a worker (starting one takes a tsx loader and hundreds of milliseconds)
    expect(performance.now() - started).toBeLessThan(50);
  });

  it("a worker ending with several requests in it is one failure, not one per request, and is logged", async () => {
    const logged: string[] = [];
    workers = new IngestWorkers(failing, 1, 30_000, (m) => logged.push(m));
    expect((await workers.prepare(request(body(["warm"]))))?.rows).toEqual(["warm"]);
    // three in the same worker: the first ends its thread, the other two are lost with it
    const lost = await Promise.all([
      workers.prepare(request(body(["exit"]))),
      workers.prepare(request(body(["b"]))),
      workers.prepare(request(body(["c"]))),
    ]);
    expect(lost).toEqual([undefined, undefined, undefined]);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/ingest worker failed .*parsed on the main thread/);
    // one failure of three: a new worker takes the next body
    expect((await workers.prepare(request(body(["next"]))))?.rows).toEqual(["next"]);
  });

  it("after close, no worker: bodies are the caller's", async () => {
    workers = new IngestWorkers(echo, 1);
    expect(await workers.prepare(request(body(["a"])))).toBeDefined();
    await workers.close();
    expect(await workers.prepare(request(body(["a"])))).toBeUndefined();
  });
});
