import { describe, expect, it } from "vitest";
import { redactionRequested } from "../src/redaction/redaction-header.ts";

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
