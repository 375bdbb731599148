import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";
import { ingestEnv, postLogs, storedIds } from "./support/ingest.ts";

const LIMIT = 64 * 1024;

/** `[{"id": id, …, "pad": "…"}]` of exactly `bytes` bytes */
function bodyOf(id: string, bytes: number): string {
  const empty = JSON.stringify([{ id, timestamp: "2025-01-15T11:00:00Z", event_message: "pad", pad: "" }]);
  const body = JSON.stringify([
    { id, timestamp: "2025-01-15T11:00:00Z", event_message: "pad", pad: "x".repeat(bytes - empty.length) },
  ]);
  expect(Buffer.byteLength(body)).toBe(bytes);
  return body;
}

/**
 * QES_INGEST_MAX_BYTES bounds the body after decompression (README); the compressed bytes are
 * bounded too, but not at the limit itself: a body that does not compress (gzip level 0, as a
 * shipper may send already-compressed or random data) is a few bytes larger compressed.
 */
describe("QES_INGEST_MAX_BYTES on a gzip body that does not compress, on duckdb", () => {
  let served: ServedFixture;
  beforeAll(async () => {
    const duckdb = BACKENDS.find((b) => b.name === "duckdb");
    if (!duckdb) throw new Error("no duckdb fixture");
    served = await serveFixture(duckdb, {}, ingestEnv({ QES_INGEST_MAX_BYTES: String(LIMIT) }));
  });
  afterAll(() => served.close());
  const gzip = { "Content-Encoding": "gzip" };

  it("takes a body that inflates to exactly the limit however large it is compressed, and refuses one byte more", async () => {
    const atLimit = gzipSync(bodyOf("at", LIMIT), { level: 0 });
    expect(atLimit.length).toBeGreaterThan(LIMIT);
    expect(await postLogs(served.url, "stored.src", atLimit, gzip)).toMatchObject({
      status: 200,
      body: { accepted: 1 },
    });
    const past = await postLogs(
      served.url,
      "stored.src",
      gzipSync(bodyOf("past", LIMIT + 1), { level: 0 }),
      gzip,
    );
    expect(past.status).toBe(413);
    expect(past.body.error.message).toMatch(/larger than 65536 bytes after decompression/);
    expect(await storedIds(served.backend, "stored.src")).toEqual(["at"]);
  });

  it("refuses compressed bytes past what any body within the limit takes, naming them as compressed", async () => {
    // empty gzip members inflate to nothing: only the compressed side's bound stops them
    const empties = Buffer.concat(Array.from({ length: (LIMIT * 2) / 20 }, () => gzipSync("")));
    const r = await postLogs(served.url, "stored.src", empties, gzip);
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe("request_too_large");
    expect(r.body.error.message).toMatch(
      /^The compressed ingest body is larger than \d+ bytes.*QES_INGEST_MAX_BYTES/,
    );
  });
});
