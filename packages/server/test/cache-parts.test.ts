import type { EndpointDefinition } from "@qes/core";
import { describe, expect, it } from "vitest";
import { ageSeconds, decodeEntry, encodeEntry } from "../src/cache/cache-entry.ts";
import { cacheKey, paramsOfSpec, parseSpecText, specText } from "../src/cache/cache-key.ts";
import { MemoryStore } from "../src/cache/memory-store.ts";

const endpoint = { id: "0b1e7d52-8f3a-4e6c-a1d9-5c2f7e804b63", version: "v1" } as EndpointDefinition;

describe("cache entries", () => {
  it("round-trip through their Redis encoding", () => {
    const entry = { body: Buffer.from('{"result":[]}'), storedAtMs: 1736942400123.5, rowLimitReached: true };
    expect(decodeEntry(encodeEntry(entry))).toEqual(entry);
    expect(decodeEntry(Buffer.from("x"))).toBeUndefined();
  });

  it("count Age in whole seconds, never negative", () => {
    const entry = { body: Buffer.alloc(0), storedAtMs: 10_000, rowLimitReached: false };
    expect(ageSeconds(entry, 12_999)).toBe(2);
    expect(ageSeconds(entry, 9_000)).toBe(0);
  });
});

describe("cache keys", () => {
  it("depend on version, canonical params, consumer SQL and redaction only", () => {
    const spec = specText({
      canonical: { interval: "daily", project: "a" },
      consumerSql: null,
      redact: false,
    });
    const key = cacheKey("qes:", endpoint, spec);
    expect(key).toMatch(/^qes:cache:0b1e7d52-8f3a-4e6c-a1d9-5c2f7e804b63:[A-Za-z0-9_-]{43}$/);
    expect(cacheKey("qes:", endpoint, spec)).toBe(key);
    const other = (patch: object) =>
      cacheKey(
        "qes:",
        endpoint,
        specText({
          canonical: { interval: "daily", project: "a" },
          consumerSql: null,
          redact: false,
          ...patch,
        }),
      );
    expect(other({ redact: true })).not.toBe(key);
    expect(other({ consumerSql: "select 1" })).not.toBe(key);
    expect(other({ canonical: { interval: "daily", project: "b" } })).not.toBe(key);
    expect(cacheKey("qes:", { ...endpoint, version: "v2" }, spec)).not.toBe(key);
  });

  it("keep what warming needs to run the request again", () => {
    const text = specText({ canonical: { a: "1", b: null, c: "" }, consumerSql: "select 1", redact: true });
    const spec = parseSpecText(text);
    expect(spec).toEqual({ canonical: { a: "1", b: null, c: "" }, consumerSql: "select 1", redact: true });
    expect({ ...paramsOfSpec(spec!) }).toEqual({ a: "1", c: "" });
    expect(parseSpecText("not json")).toBeUndefined();
  });
});

describe("MemoryStore", () => {
  it("expires entries after their lifetime and drops the least recently used", () => {
    const store = new MemoryStore(2);
    const entry = (t: number) => ({ body: Buffer.from(String(t)), storedAtMs: t, rowLimitReached: false });
    store.set("a", entry(1000), 1000);
    expect(store.get("a", 1999)).toBeDefined();
    expect(store.get("a", 2000)).toBeUndefined();
    store.set("a", entry(5000), 1000);
    store.set("b", entry(5000), 1000);
    store.get("a", 5001);
    store.set("c", entry(5000), 1000);
    expect(store.get("b", 5001)).toBeUndefined();
    expect(store.get("a", 5001)).toBeDefined();
    expect(store.size).toBe(2);
  });
});
