import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PostgresBackend } from "../src/index.ts";
import { freshBackend, handQuery, scalar } from "./helpers.ts";

describe("PostgreSQL values → wire values (DESIGN.md §4)", () => {
  let backend: PostgresBackend;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ backend, dispose } = await freshBackend("values"));
  });
  afterAll(async () => {
    await dispose();
  });

  it("converts each type by the column's wire type", async () => {
    const result = await backend.execute(
      handQuery(
        `select '2025-01-15 09:00:00.123456+00'::timestamptz as ts,
                '2025-01-15 09:00:00'::timestamp as dt0,
                '2025-01-15 09:00:00.5'::timestamp as dt5,
                '2025-01-15'::date as d,
                9223372036854775807::bigint as big,
                count(*) as n,
                sum(9007199254740993::bigint) as s,
                avg(3::bigint) as a,
                1.5::float8 as f,
                'NaN'::float8 as nan,
                true as b,
                string_to_array('a,b', ',') as arr,
                array['2025-01-15 09:00:00.000001+00'::timestamptz] as tsarr,
                array[9223372036854775807::bigint, null] as bigarr,
                json_build_array(1, 9007199254740993) as jarr,
                json_build_object('k', json_build_object('x', 1)) as rec,
                null::text as nothing`,
        [
          scalar("ts", "TIMESTAMP"),
          scalar("dt0", "DATETIME"),
          scalar("dt5", "DATETIME"),
          scalar("d", "DATE"),
          scalar("big", "INT64"),
          scalar("n", "INT64"),
          scalar("s", "INT64"),
          scalar("a", "FLOAT64"),
          scalar("f", "FLOAT64"),
          scalar("nan", "FLOAT64"),
          scalar("b", "BOOL"),
          { name: "arr", type: { kind: "array", element: "STRING" } },
          { name: "tsarr", type: { kind: "array", element: "TIMESTAMP" } },
          { name: "bigarr", type: { kind: "array", element: "INT64" } },
          { name: "jarr", type: { kind: "array", element: "INT64" } },
          {
            name: "rec",
            type: {
              kind: "record",
              repeated: false,
              node: {
                name: "rec",
                kind: "record",
                fields: {
                  k: {
                    name: "k",
                    kind: "record",
                    fields: { x: { name: "x", kind: "scalar", type: "INT64" } },
                  },
                },
              },
            },
          },
          scalar("nothing", "STRING"),
        ],
      ),
      [],
      { maxRows: 1, timeoutMs: 5000 },
    );
    expect(result.rows).toEqual([
      {
        ts: 1736931600123456,
        dt0: "2025-01-15T09:00:00",
        dt5: "2025-01-15T09:00:00.500000",
        d: "2025-01-15",
        big: "9223372036854775807",
        n: 1,
        s: "9007199254740993",
        a: 3,
        f: 1.5,
        nan: "NaN",
        b: true,
        arr: ["a", "b"],
        tsarr: [1736931600000001],
        bigarr: ["9223372036854775807"],
        jarr: [1, "9007199254740993"],
        rec: { k: [{ x: 1 }] },
        nothing: null,
      },
    ]);
  });
});
