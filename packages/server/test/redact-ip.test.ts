import { describe, expect, it } from "vitest";
import { redactRows, redactText, redactValue } from "../src/redaction/redact-ip.ts";
import { redactionRequested } from "../src/redaction/redaction-header.ts";

describe("redactText", () => {
  it.each([
    ["1.2.3.4", "REDACTED"],
    ["a 1.2.3.4 b", "a REDACTED b"],
    ["1.2.3.4,5.6.7.8", "REDACTED,REDACTED"],
    ["x-forwarded-for:1.2.3.4", "x-forwarded-for:REDACTED"],
    ["ws://10.1.2.3:9000/socket", "ws://REDACTED:9000/socket"],
    ["'192.0.2.1'", "'REDACTED'"],
    ["[::1]", "[REDACTED]"],
    ["::1.2.3.4", "REDACTED"],
    ["fe80::1%1", "REDACTED"],
    ["fe80::1%eth0]:80", "REDACTED]:80"],
    ["x-real-ip:2001:db8::11", "x-real-ip:REDACTED"],
    ["2001:db8::8:443", "REDACTED"],
    ["FE80::ABCD", "REDACTED"],
    ['"2001:db8::1"', '"REDACTED"'],
    ["addr=2001:db8::1;", "addr=REDACTED;"],
    ["2001:db8::1\n2001:db8::2", "REDACTED\nREDACTED"],
    ["::ffff:192.168.0.1 and 10.0.0.1", "REDACTED and REDACTED"],
  ])("%j → %j", (text, expected) => {
    expect(redactText(text)).toBe(expected);
  });

  it.each([
    "",
    "plain text",
    "1.2.3.4.5",
    "11.2.3.4.5",
    "v1.2.3.4",
    "ip1.2.3.4",
    "1.2.3.4abc",
    "10.0.0.256",
    "Chrome/120.0.6099.109",
    "00:1a:2b:3c:4d:5e",
    "12:34:56",
    "12:34:56.789",
    "at 10:00 and 12:00:00",
    "2025-01-15T12:34:56.123456Z",
    "6a3c1f0e-2b7d-4c58-9e41-0d8f5b2a7c19",
    "::",
    "use a :: b",
    "std::vector<int>",
    "Foo::bar",
    "x::1",
    "ab:cd",
    "16:9",
    "%25",
    "100%",
  ])("leaves %j alone", (text) => {
    expect(redactText(text)).toBe(text);
  });
});

describe("redactValue", () => {
  it("walks arrays and objects at any depth, keeping keys, numbers, booleans and nulls", () => {
    const value = {
      "10.0.0.1": "10.0.0.2",
      n: 10,
      b: true,
      z: null,
      list: ["::1", { deep: [{ deeper: "from 2001:db8::1" }] }],
    };
    expect(redactValue(value)).toEqual({
      "10.0.0.1": "REDACTED",
      n: 10,
      b: true,
      z: null,
      list: ["REDACTED", { deep: [{ deeper: "from REDACTED" }] }],
    });
    // the input is not changed
    expect(value.list[0]).toBe("::1");
  });

  it("keeps a key named __proto__ as data", () => {
    const row = JSON.parse('{"__proto__": {"ip": "1.2.3.4"}}');
    const [out] = redactRows([row]);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"ip":"REDACTED"}}');
  });
});

describe("redactionRequested", () => {
  it("is true for any of the three headers set to true, in any case", () => {
    expect(redactionRequested({ "qes-endpoint-redact-pii": "true" })).toBe(true);
    expect(redactionRequested({ "svc-endpoint-redact-pii": "TRUE" })).toBe(true);
    expect(redactionRequested({ "lf-endpoint-redact-pii": " True " })).toBe(true);
    expect(redactionRequested({ "lf-endpoint-redact-pii": ["false", "true"] })).toBe(true);
    expect(redactionRequested({ "qes-endpoint-redact-pii": "false" })).toBe(false);
    expect(redactionRequested({ "qes-endpoint-redact-pii": "1" })).toBe(false);
    expect(redactionRequested({})).toBe(false);
  });
});
