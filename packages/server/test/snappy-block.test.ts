import { readFileSync } from "node:fs";
import { QesError } from "@qes/core";
import { describe, expect, it } from "vitest";
import { decodeSnappyBlock, snappyCompressedBound } from "../src/ingest/snappy-block.ts";

const big = () => new Error("too large");
const decode = (bytes: number[], max = 1000) => decodeSnappyBlock(Uint8Array.from(bytes), max, big);
const refusal = (f: () => unknown): QesError => {
  try {
    f();
  } catch (e) {
    if (e instanceof QesError) return e;
    throw e;
  }
  throw new Error("not refused");
};

describe("snappy's raw block format", () => {
  it("decodes a Vector batch that libsnappy compressed (literals, copies with 1- and 2-byte offsets)", () => {
    // test/http/fixtures/vector-snappy-200.json.snappy: 200 events, sorted keys, compact JSON,
    // compressed by python3-snappy (libsnappy 1.1.9)
    const block = readFileSync(
      new URL("../../../test/http/fixtures/vector-snappy-200.json.snappy", import.meta.url),
    );
    const text = decodeSnappyBlock(block, 10_000_000, big).toString("utf8");
    const events = JSON.parse(text) as { id: string; message: string }[];
    expect(events).toHaveLength(200);
    expect(events[199]).toEqual({
      host: "web-1",
      id: "sn199",
      message: "GET /rest/v1/todos?select=* HTTP/1.1 200 1393",
      source_type: "file",
      timestamp: "2025-01-15T11:03:19.199000597Z",
    });
    expect(block.length).toBeLessThan(text.length / 5);
    expect(snappyCompressedBound(text.length)).toBeGreaterThan(text.length);
  });

  it("reads each element kind by hand: a literal, an overlapping copy, a literal of a long length", () => {
    expect(decode([5, 0x10, ...Buffer.from("hello")]).toString()).toBe("hello");
    // "abc", then 6 bytes copied from 3 back: the copy overlaps what it writes
    expect(decode([9, 0x08, ...Buffer.from("abc"), 0x09, 3]).toString()).toBe("abcabcabc");
    // the same with a 2-byte offset (tag 2) and a 4-byte one (tag 3)
    expect(decode([9, 0x08, ...Buffer.from("abc"), (5 << 2) | 2, 3, 0]).toString()).toBe("abcabcabc");
    expect(decode([9, 0x08, ...Buffer.from("abc"), (5 << 2) | 3, 3, 0, 0, 0]).toString()).toBe("abcabcabc");
    // a literal of 100 bytes: its length less one in the byte after tag 60
    expect(decode([100, 60 << 2, 99, ...Buffer.alloc(100, 0x61)]).toString()).toBe("a".repeat(100));
    expect(decode([0]).length).toBe(0);
  });

  it("refuses a block declaring more than the limit before decoding it, and a corrupt one with 400", () => {
    // 2^31 declared in five bytes: refused by its length, nothing allocated
    expect(() => decode([0x80, 0x80, 0x80, 0x80, 0x08, 0x00], 1000)).toThrow("too large");
    for (const [bytes, reason] of [
      [[], /the length it begins with is cut short/],
      [[0x80], /the length it begins with is cut short/],
      [[5, 0x10, ...Buffer.from("hel")], /corrupt/],
      [[2, 0x10, ...Buffer.from("hello")], /corrupt/],
      [[6, 0x08, ...Buffer.from("abc"), 0x01, 0], /corrupt/],
      [[9, 0x08, ...Buffer.from("abc"), 0x09, 4], /corrupt/],
      [[9, 0x08, ...Buffer.from("abc"), 0x09], /corrupt/],
      [[9, 0x08, ...Buffer.from("abc")], /expected 9 decompressed bytes but got 3/],
    ] as const) {
      const e = refusal(() => decode([...bytes]));
      expect(e.code, String(reason)).toBe("invalid_parameter");
      expect(e.param).toBe("Content-Encoding");
      expect(e.message).toMatch(reason);
    }
  });
});
