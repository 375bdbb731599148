import { describe, expect, it } from "vitest";
import { RefusalPacing, refusalKey } from "../src/admission/refusal-pacing.ts";

describe("refusal pacing", () => {
  it("sends a caller's refusals at once within its budget, then holds each to the end of the second", async () => {
    const pacing = new RefusalPacing(3);
    const holds = [];
    for (let i = 0; i < 6; i++) holds.push(await pacing.holdMs("caller:a"));
    expect(holds.slice(0, 3)).toEqual([0, 0, 0]);
    for (const ms of holds.slice(3)) {
      expect(ms).toBeGreaterThan(0);
      expect(ms).toBeLessThanOrEqual(1000);
    }
  });

  it("counts each caller on its own: one caller's flood holds nobody else", async () => {
    const pacing = new RefusalPacing(2);
    for (let i = 0; i < 10; i++) await pacing.holdMs("caller:flooder");
    expect(await pacing.holdMs("caller:flooder")).toBeGreaterThan(0);
    expect(await pacing.holdMs("caller:other")).toBe(0);
    expect(await pacing.holdMs("address:127.0.0.1")).toBe(0);
  });

  it("names a refusal by its caller, or by the client's address before authentication", () => {
    expect(refusalKey("abc", "127.0.0.1")).toBe("caller:abc");
    expect(refusalKey(undefined, "10.0.0.7")).toBe("address:10.0.0.7");
    expect(refusalKey(undefined, undefined)).toBe("address:unknown");
    // a caller named like an address is still a caller: the two never share a budget
    expect(refusalKey("address:10.0.0.7", "10.0.0.7")).not.toBe(refusalKey(undefined, "10.0.0.7"));
  });
});
