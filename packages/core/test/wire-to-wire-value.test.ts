import { describe, expect, it } from "vitest";
import { newSourceSchema, widenSchema } from "../src/schema/infer-schema.ts";
import { parseEvent } from "../src/schema/parse-event.ts";
import { toWireValue } from "../src/wire/to-wire-value.ts";

describe("toWireValue", () => {
  it("formats scalars by type", () => {
    expect(toWireValue({ kind: "scalar", type: "TIMESTAMP" }, 1736931600123456n)).toBe(1736931600123456);
    expect(toWireValue({ kind: "scalar", type: "DATETIME" }, 1736931600123456n)).toBe(
      "2025-01-15T09:00:00.123456",
    );
    expect(toWireValue({ kind: "scalar", type: "DATETIME" }, 1736931600000000n)).toBe("2025-01-15T09:00:00");
    expect(toWireValue({ kind: "scalar", type: "DATE" }, 20103)).toBe("2025-01-15");
    expect(toWireValue({ kind: "scalar", type: "INT64" }, 9007199254740993n)).toBe("9007199254740993");
    expect(toWireValue({ kind: "scalar", type: "INT64" }, -9007199254740991n)).toBe(-9007199254740991);
    expect(toWireValue({ kind: "scalar", type: "FLOAT64" }, 1.5)).toBe(1.5);
    expect(toWireValue({ kind: "scalar", type: "BOOL" }, true)).toBe(true);
    expect(toWireValue({ kind: "scalar", type: "STRING" }, null)).toBeNull();
    expect(toWireValue({ kind: "null" }, "x")).toBeNull();
  });

  it("shapes records BigQuery-style", () => {
    const s = newSourceSchema("x");
    const e = parseEvent(
      JSON.stringify({
        metadata: {
          request: { path: "/a", headers: { x_real_ip: "1.2.3.4" } },
          status: 200,
          tags: ["a"],
          items: [{ k: 1, o: { p: 2 } }],
        },
      }).replace("200", "9007199254740993"),
      1,
      0n,
      "test",
    )!;
    widenSchema(s, e.body);
    widenSchema(s, parseEvent('{"metadata":{"w":1}}', 2, 0n, "test")!.body);
    widenSchema(s, parseEvent('{"metadata":{"w":"s"}}', 3, 0n, "test")!.body);
    const node = s.fields.metadata!;
    const text =
      '{"request":{"path":"/a","headers":{"x_real_ip":"1.2.3.4"}},"status":9007199254740993,' +
      '"tags":["a"],"items":[{"k":1,"o":{"p":2}}],"w":5}';
    expect(toWireValue({ kind: "record", node, repeated: true }, text)).toEqual([
      {
        request: [{ path: "/a", headers: [{ x_real_ip: "1.2.3.4" }] }],
        status: "9007199254740993",
        tags: ["a"],
        items: [{ k: 1, o: [{ p: 2 }] }],
        w: "5",
      },
    ]);
    expect(toWireValue({ kind: "record", node, repeated: false }, '{"status":1}')).toEqual({ status: 1 });
    expect(toWireValue({ kind: "record", node, repeated: true }, null)).toEqual([]);
    expect(toWireValue({ kind: "record", node, repeated: false }, null)).toBeNull();
    expect(toWireValue({ kind: "records", node: node.fields!.items! }, null)).toEqual([]);
    expect(toWireValue({ kind: "array", element: "INT64" }, "[1,null,2]")).toEqual([1, 2]);
  });
});
