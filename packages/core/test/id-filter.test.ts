import { describe, expect, it } from "vitest";
import { IdFilter } from "../src/schema/id-filter.ts";

const range = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

describe("IdFilter", () => {
  it("never answers false for an id it holds, and rarely true for one it does not", () => {
    const filter = new IdFilter(100_000);
    for (const id of range("in", 100_000)) filter.add(id);
    for (const id of range("in", 100_000)) expect(filter.mightContain(id)).toBe(true);
    const false_ = range("out", 100_000).filter((id) => filter.mightContain(id)).length;
    expect(false_).toBeLessThan(3000); // ~1% by design
    expect(filter.full).toBe(false);
    filter.add("one more");
    expect(filter.full).toBe(true);
  });
});
