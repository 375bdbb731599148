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

  it("counts an unauthenticated IPv6 client by its /64: rotating addresses inside it buys no new budget", async () => {
    const a = refusalKey(undefined, "2001:db8:aa:bb::1");
    expect(a).toBe("address:2001:db8:aa:bb::/64");
    expect(refusalKey(undefined, "2001:db8:aa:bb:ffff:1234:5678:9abc")).toBe(a);
    expect(refusalKey(undefined, "2001:db8:aa:bc::1")).not.toBe(a);
    // an IPv4 client reached over a dual-stack socket is the IPv4 address, not ::ffff:0:0/64
    expect(refusalKey(undefined, "::ffff:10.0.0.7")).toBe("address:10.0.0.7");
    expect(refusalKey(undefined, "::ffff:10.0.0.8")).not.toBe(refusalKey(undefined, "::ffff:10.0.0.7"));
    const pacing = new RefusalPacing(3);
    for (let i = 0; i < 3; i++)
      expect(await pacing.holdMs(refusalKey(undefined, `2001:db8:aa:bb::${i + 1}`))).toBe(0);
    expect(await pacing.holdMs(refusalKey(undefined, "2001:db8:aa:bb::99"))).toBeGreaterThan(0);
    expect(await pacing.holdMs(refusalKey(undefined, "2001:db8:aa:bc::1"))).toBe(0);
  });
});
