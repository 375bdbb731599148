import { clickhouseDialect } from "@qes/backend-clickhouse";
import { duckdbDialect } from "@qes/backend-duckdb";
import { postgresDialect } from "@qes/backend-postgres";
import {
  ADDRESS_CHARS,
  ADDRESS_PATTERN,
  ADDRESS_PATTERN_WITHOUT_PERCENT,
  bindRequestParams,
  builtinLogSchema,
  compileEndpoint,
  type Dialect,
  type EndpointDefinition,
  IPV4_ADDRESS_PATTERN,
  IPV6_HINT_PATTERN,
  type LogSchema,
  parseEvent,
  parseSelect,
  widenSchema,
} from "@qes/core";
import { beforeAll, describe, expect, it } from "vitest";

// The shape of the SQL the emitters write, where it decides speed or safety and the rows alone
// would not show it.

let schema: LogSchema;
beforeAll(() => {
  schema = builtinLogSchema();
  const event = parseEvent(
    JSON.stringify({
      project: "p",
      event_message: "x",
      metadata: { request: { path: "/rest/v1", url: "https://p.supabase.co/rest/v1" } },
    }),
    1,
    0n,
    "test",
  )!;
  widenSchema(schema.sources["cloudflare.logs.prod"]!, event.body);
});

function columnOf(path: string[]): string {
  let fields = schema.sources["cloudflare.logs.prod"]!.fields;
  let column = "";
  for (const name of path) {
    const node = fields[name]!;
    column = node.column!;
    fields = node.fields ?? {};
  }
  return column;
}

function endpoint(sql: string, params: EndpointDefinition["params"] = {}): EndpointDefinition {
  return {
    id: "00000000-0000-4000-8000-00000000e5a1",
    name: "emitted",
    sql,
    sqlFile: "emitted.sql",
    maxRows: 100,
    cacheTtlSeconds: 0,
    sandboxable: true,
    redactPii: false,
    params,
    version: sql,
  };
}

describe("emitted SQL", () => {
  it("tests a nested record's presence instead of reading the top-level record's JSON column", () => {
    // (usage.api-counts has no presence test left: its regexp_contains(r.url, …) implies it,
    // record-presence.test.ts)
    const ep = endpoint(
      "select r.path from `cloudflare.logs.prod` t cross join unnest(t.metadata) m cross join unnest(m.request) r",
    );
    for (const dialect of [duckdbDialect, postgresDialect]) {
      const { sql } = compileEndpoint(ep, { schema, dialect });
      expect(sql).toContain(`"${columnOf(["metadata", "request"])}" IS NOT NULL`);
      expect(sql).not.toContain(`"${columnOf(["metadata"])}" IS NOT NULL`);
    }
  });

  it("orders grouped rows by all their group keys without completing the order: each group is one row", () => {
    const byAllKeys = endpoint(
      "select project, count(*) as n from `cloudflare.logs.prod` group by project order by project limit 5",
    );
    const bySome = endpoint(
      "select project, id, count(*) as n from `cloudflare.logs.prod` group by project, id order by project limit 5",
    );
    for (const dialect of [duckdbDialect, postgresDialect, clickhouseDialect]) {
      const orderOf = (ep: EndpointDefinition) =>
        /\nORDER BY (.*)\nLIMIT/.exec(compileEndpoint(ep, { schema, dialect }).sql)![1]!;
      expect(orderOf(byAllKeys)).not.toContain(",");
      expect(orderOf(bySome).split(",")).toHaveLength(3);
    }
  });

  it("keeps the top-level presence test when nothing below it is unnested", () => {
    const ep = endpoint("select t.id from `cloudflare.logs.prod` t cross join unnest(t.metadata) m");
    const { sql } = compileEndpoint(ep, { schema, dialect: duckdbDialect });
    expect(sql).toContain(`"${columnOf(["metadata"])}" IS NOT NULL`);
  });

  it("tests plain-character patterns with strpos on PostgreSQL, and keeps regexes as regexes", () => {
    const ep = endpoint(
      "select countif(regexp_contains(event_message, '/rest')) a, countif(regexp_contains(event_message, '^/rest')) b from `cloudflare.logs.prod`",
    );
    const { sql } = compileEndpoint(ep, { schema, dialect: postgresDialect });
    expect(sql).toContain(`strpos("t0"."event_message", '/rest') > 0`);
    expect(sql).toContain(`"t0"."event_message" ~ '^/rest'`);
  });

  describe("a parameter with allowed values", () => {
    const ep = endpoint(
      "select case @unit when 'day' then timestamp_trunc(timestamp, day) else timestamp_trunc(timestamp, hour) end as b from `cloudflare.logs.prod` where event_message = @m",
      {
        unit: { required: true, kind: "string", allowed: ["day", "hour"] },
        m: { required: false, kind: "string", allowed: ["a", "b"], default: "a" },
      },
    );

    it("is compiled as the chosen value's literal, one compiled query per choice", () => {
      for (const dialect of [duckdbDialect, postgresDialect]) {
        const day = compileEndpoint(ep, { schema, dialect, params: { unit: "day", m: "b" } });
        const hour = compileEndpoint(ep, { schema, dialect, params: { unit: "hour" } });
        // and the CASE over it is the branch the value picks (compile/constant-case.ts)
        expect(day.sql).toContain(`date_trunc('day', "t0"."timestamp"`);
        expect(day.sql).not.toContain("CASE");
        expect(day.sql).toContain(`"event_message" = 'b'`);
        // an absent parameter takes its default's literal
        expect(hour.sql).toContain(`date_trunc('hour', "t0"."timestamp"`);
        expect(hour.sql).not.toContain("CASE");
        expect(hour.sql).toContain(`"event_message" = 'a'`);
        expect(day.params).toEqual([]);
        expect(bindRequestParams(ep, day, { unit: "day", m: "b" }, 0n).values).toEqual([]);
      }
    });

    it("stays a parameter when the value is not allowed (binding refuses it) or there is no request", () => {
      const bad = compileEndpoint(ep, { schema, dialect: postgresDialect, params: { unit: "week" } });
      expect(bad.params.map((p) => p.name)).toEqual(["unit"]);
      expect(() => bindRequestParams(ep, bad, { unit: "week" }, 0n)).toThrow(/must be one of day, hour/);
      // a value differing only in case is not an allowed value either: never compiled as text
      const upper = compileEndpoint(ep, { schema, dialect: postgresDialect, params: { unit: "DAY'--" } });
      expect(upper.sql).not.toContain("DAY");
      const generic = compileEndpoint(ep, { schema, dialect: postgresDialect });
      expect(generic.params.map((p) => p.name)).toEqual(["unit", "m"]);
    });
  });

  it("tests a bound pattern of plain characters with strpos on PostgreSQL, decided once per query", () => {
    const ep = endpoint("select id from `cloudflare.logs.prod` where regexp_contains(event_message, @p)", {
      p: { required: true, kind: "string" },
    });
    const { sql } = compileEndpoint(ep, { schema, dialect: postgresDialect });
    // the choice is an uncorrelated scalar subquery (an InitPlan): evaluated once, not per row
    expect(sql).toContain(
      `(CASE WHEN (SELECT $1::text !~ '[\\\\^$.|?*+()[\\]{}]') THEN strpos("t0"."event_message", $1::text) > 0 ELSE "t0"."event_message" ~ $1::text END)`,
    );
  });

  it("translates a pattern parameter for PostgreSQL when it is bound, and leaves it as written for DuckDB", () => {
    const ep = endpoint("select id from `cloudflare.logs.prod` where regexp_contains(event_message, @p)", {
      p: { required: true, kind: "string" },
    });
    const pg = compileEndpoint(ep, { schema, dialect: postgresDialect });
    const duck = compileEndpoint(ep, { schema, dialect: duckdbDialect });
    expect(bindRequestParams(ep, pg, { p: "a.b" }, 0n).values).toEqual(["a[^\\n]b"]);
    expect(bindRequestParams(ep, duck, { p: "a.b" }, 0n).values).toEqual(["a.b"]);
  });

  it("case-folds CONTAINS_SUBSTR's texts over one list of the special characters, not a call per character", () => {
    // ~126 nested replace() per side took DuckDB 150–350 ms to plan, per query
    const ep = endpoint(
      "select count(*) as n from `cloudflare.logs.prod` where contains_substr(event_message, 'x')",
    );
    for (const dialect of [duckdbDialect, clickhouseDialect]) {
      const { sql } = compileEndpoint(ep, { schema, dialect });
      expect(sql.match(/replace(All)?\(/g)?.length, dialect.name).toBeLessThanOrEqual(4);
      expect(sql.length, dialect.name).toBeLessThan(12_000);
    }
  });

  it("checks a zone reading's range on ClickHouse by the zone's offsets, not by reading the time again", () => {
    // ClickHouse computes every branch of a CASE: reading again made each zone conversion 2–3× dearer
    const ep = endpoint(
      "select timestamp_trunc(timestamp, hour, 'America/New_York') as h, datetime(timestamp, 'Asia/Kolkata') as d from `cloudflare.logs.prod`",
    );
    const { sql } = compileEndpoint(ep, { schema, dialect: clickhouseDialect });
    const max = 253402300799999999n; // 9999-12-31 23:59:59.999999 in µs
    // Kolkata reads 5:30 ahead: an instant past the end less that is out of range
    expect(sql).toContain(String(max - 19_800_000_000n));
    // not the bound nine days inward that the reading again compares with (DuckDB's, PostgreSQL's)
    expect(sql).not.toContain(String(max - 9n * 86_400_000_000n));
    expect(sql).toContain("TIMESTAMP_TRUNC: the result is out of TIMESTAMP");
    expect(sql).toContain("DATETIME: the result is out of DATETIME");
    expect(compileEndpoint(ep, { schema, dialect: duckdbDialect }).sql).toContain(
      String(max - 9n * 86_400_000_000n),
    );
  });

  it("checks no division by a literal other than 0, nor the overflow of a value divided by one of magnitude 1 or more", () => {
    const sqlOf = (q: string) =>
      compileEndpoint(endpoint(`select ${q} as v from \`cloudflare.logs.prod\` t, unnest([1.5]) x`), {
        schema,
        dialect: duckdbDialect,
      }).sql;
    for (const q of ["x / 4", "x / 1000", "count(*) / 60"]) {
      expect(sqlOf(q), q).not.toMatch(/division by zero|floating point overflow/);
    }
    // a divisor below 1 may overflow; a divisor that is not a literal may be 0
    expect(sqlOf("x / 0.5")).toContain("floating point overflow");
    expect(sqlOf("x / 0.5")).not.toContain("division by zero");
    expect(sqlOf("x / x")).toContain("division by zero");
    expect(sqlOf("x / 0")).toContain("division by zero");
  });

  it("orders strings by code point on PostgreSQL, outside the set operation", () => {
    const ep = endpoint("select event_message m from `cloudflare.logs.prod` union all select 'x' order by m");
    const { sql } = compileEndpoint(ep, { schema, dialect: postgresDialect });
    expect(sql).toMatch(/\) AS "__set"\nORDER BY \("c0" COLLATE "C"\) ASC NULLS FIRST/);
  });
});

describe("parsing limits and names", () => {
  it("refuses more tokens than the parser can take cheaply", () => {
    const sql = `select ${Array.from({ length: 12000 }, () => "1").join("+")} as x`;
    expect(() => parseSelect(sql)).toThrow(expect.objectContaining({ code: "sql_too_complex" }));
  });

  it("refuses quoted names holding a backtick or a backslash, where the lexer and the parser could disagree", () => {
    expect(() => parseSelect("select `a\\`b` from t")).toThrow(
      expect.objectContaining({ code: "sql_invalid" }),
    );
    expect(() => parseSelect("select `a\\\\b` from t")).toThrow(
      expect.objectContaining({ code: "sql_invalid" }),
    );
  });

  it("shows a string used as a table name as written, not as its internal placeholder", () => {
    const ep = endpoint('select 1 from "edge"');
    expect(() => compileEndpoint(ep, { schema, dialect: duckdbDialect })).toThrow(/'edge'/);
  });
});

describe("wide and long queries", () => {
  const union = (n: number, op = "union all") =>
    Array.from({ length: n }, (_, i) => `select ${i} as x`).join(` ${op} `);

  it("writes a chain of set operations flat, without one level of parentheses per branch", () => {
    const { sql } = compileEndpoint(endpoint(union(3)), { schema, dialect: duckdbDialect });
    expect(sql).toMatch(/\(SELECT [^\n]*\)\nUNION ALL\n\(SELECT [^\n]*\)\nUNION ALL\n\(SELECT [^\n]*\)/);
    expect(sql).not.toContain("((SELECT");
  });

  it("keeps the links of another operator grouped as BigQuery reads them, left to right", () => {
    const ep = endpoint(
      "select 1 as x union all select 2 as x union distinct select 3 as x union all select 4 as x",
    );
    const { sql } = compileEndpoint(ep, { schema, dialect: duckdbDialect });
    expect(sql).toMatch(
      /\(\(SELECT [^\n]*\)\nUNION ALL\n\(SELECT [^\n]*\)\)\nUNION DISTINCT\n\(SELECT [^\n]*\)\)\nUNION ALL\n\(SELECT /,
    );
  });

  it("compiles the longest chain allowed (256 branches) on every dialect", () => {
    for (const dialect of [duckdbDialect, postgresDialect]) {
      const { sql } = compileEndpoint(endpoint(union(256)), { schema, dialect });
      expect(sql.split("\nUNION ALL\n")).toHaveLength(256);
    }
  });

  it.each([
    ["3,000 UNION ALL branches", union(3000), "A set operation joins 3000 queries; the limit is 256."],
    ["257 EXCEPT DISTINCT branches", union(257, "except distinct"), "joins 257 queries"],
    [
      "3,000 columns",
      `select ${Array.from({ length: 3000 }, (_, i) => `'s${i}' as c${i}`).join(", ")}`,
      "The SELECT list has 3000 columns; the limit is 1000.",
    ],
  ])("refuses %s as sql_too_complex, where it threw a 500 before", (_name, sql, message) => {
    expect(() => compileEndpoint(endpoint(sql), { schema, dialect: duckdbDialect })).toThrow(
      expect.objectContaining({ code: "sql_too_complex", message: expect.stringContaining(message) }),
    );
  });
});

describe("redaction consumer SQL cannot undo", () => {
  const ep = endpoint(
    "with a as (select event_message as m, metadata, 1 as n from `cloudflare.logs.prod`), b as (select m, n from a where m != '') select m from b",
  );
  const compile = (consumerSql: string | undefined, redact: boolean, dialect: Dialect = duckdbDialect) =>
    compileEndpoint(ep, {
      schema,
      dialect,
      redact,
      ...(consumerSql === undefined ? {} : { consumerSql }),
    }).sql;
  const finalFrom = (sql: string) => /\nFROM "(q\d+)" AS "r\d+"\nLIMIT [^\n]*$/.exec(sql)?.[1] ?? sql;

  it("reads a stored CTE through a redacting CTE; stored CTEs still read each other as they are", () => {
    const plain = compile("select m, n from b", false);
    const redacted = compile("select m, n from b", true);
    expect(plain).not.toContain("regexp_replace");
    // one wrapper: b's (a's is not read by the consumer, so it is not emitted); INT64 n untouched
    expect(redacted.match(/regexp_replace\(/g)).toHaveLength(1);
    const wrapper = finalFrom(redacted);
    expect(wrapper).not.toBe(finalFrom(plain));
    expect(redacted).toMatch(
      new RegExp(
        `"${wrapper}" AS \\(\\nSELECT regexp_replace\\(CAST\\("__r"\\."c0" AS VARCHAR\\), '[^']+', 'REDACTED', 'g'\\) AS "c0", "__r"\\."c1" AS "c1"\\nFROM "${finalFrom(plain)}" AS "__r"`,
      ),
    );
  });

  it("redacts the hidden columns consumer SQL adds to a stored CTE, and whole records as JSON text", () => {
    const redacted = compile(
      "select metadata[0].request[0].path as p, metadata from a",
      true,
      postgresDialect,
    );
    // the path (a hidden column of a) and the record's JSON text: two columns, both redacted,
    // with the pattern PostgreSQL reads (word boundaries as ASCII lookarounds); the strings have
    // the IPv4 form alone on the whole text and before the cut, the JSON text one to mark its escapes
    expect(redacted.match(/regexp_replace\(CAST\(/g)).toHaveLength(3);
    expect(redacted.match(/regexp_replace\(left\(CAST\(/g)).toHaveLength(2);
    expect(redacted).toContain("(?<![0-9A-Za-z_])(?=[0-9A-Za-z_])");
    expect(redacted).not.toContain("\\b");
    // under the collation "C", whose word characters are ASCII ones as in RE2 and JavaScript
    expect(redacted.match(/ COLLATE "C", '/g)).toHaveLength(15);
  });

  it("runs the whole address pattern on PostgreSQL only from the first IPv6 hint to the last", () => {
    const redacted = compile(
      "select metadata[0].request[0].path as p, metadata from a",
      true,
      postgresDialect,
    );
    const literal = (pattern: string) => postgresDialect.stringLiteral(postgresDialect.bindPattern(pattern));
    const whole = literal(ADDRESS_PATTERN);
    const hint = `(?:${postgresDialect.bindPattern(IPV6_HINT_PATTERN)})`;
    // the message and the path the wrapper passes on, and the record's JSON text: each text is
    // cut where the runs of address characters holding a hint begin and end (the regexes in
    // PostgreSQL's syntax, where `.` takes newlines too) …
    const fromFirstHint = ` FROM '${ADDRESS_CHARS}*${hint}.*') AS `;
    const toLastHint = ` FROM '^.*${hint}${ADDRESS_CHARS}*') AS `;
    expect(redacted.split(fromFirstHint)).toHaveLength(4);
    expect(redacted.split(toLastHint)).toHaveLength(4);
    // … and the whole pattern reads only the middle piece, the IPv4 form alone the rest
    const middles = [...redacted.matchAll(/ FROM '\^[^']*'\) AS (\w+) OFFSET 0/g)].map((m) => m[1]);
    expect(middles).toHaveLength(3);
    // (without a `%` in it, the pattern less its `%` paths)
    const lean = literal(ADDRESS_PATTERN_WITHOUT_PERCENT);
    for (const name of middles)
      expect(redacted).toContain(
        `CASE WHEN strpos(${name}, '%') > 0 THEN regexp_replace(${name} COLLATE "C", ${whole}, 'REDACTED', 'g') ELSE regexp_replace(${name} COLLATE "C", ${lean}, 'REDACTED', 'g') END`,
      );
    expect(redacted.split(whole)).toHaveLength(4);
    expect(redacted.split(literal(IPV4_ADDRESS_PATTERN))).toHaveLength(10);
  });

  it("changes nothing without consumer SQL, and is part of the compiled query's cache key", () => {
    expect(compile(undefined, true)).toBe(compile(undefined, false));
    expect(compile("select m from b", false)).not.toBe(compile("select m from b", true));
  });
});

describe("nested functions' SQL", () => {
  const zone = "'America/New_York'";
  /** `levels` TIMESTAMP_TRUNCs in a zone, each of the one inside, of an event's timestamp */
  const nestedTrunc = (levels: number) => {
    let x = "timestamp";
    for (let i = 0; i < levels; i++) x = `timestamp_trunc(${x}, ${i % 2 ? "week(monday)" : "day"}, ${zone})`;
    return `select format_timestamp('%F %Ez', timestamp(cast(${x} as string), ${zone}), ${zone}) as t from \`cloudflare.logs.prod\``;
  };

  it("grows by what each level writes, not by a factor per level, for time functions in a zone", () => {
    for (const dialect of [duckdbDialect, postgresDialect, clickhouseDialect]) {
      const size = (levels: number) =>
        compileEndpoint(endpoint(nestedTrunc(levels)), { schema, dialect }).sql.length;
      const one = size(1);
      // a TIMESTAMP_TRUNC of one in a zone was 1 MB on DuckDB, three levels 130 MB, four past a string's length
      expect(size(8), dialect.name).toBeLessThan(one * 12);
    }
  });

  it("grows by what each level writes for JSON_VALUE and JSON_QUERY of one another", () => {
    const nested = (fn: string, levels: number) => {
      let x = "event_message";
      for (let i = 0; i < levels; i++) x = `${fn}(${x}, '$.a')`;
      return `select ${x} as v from \`cloudflare.logs.prod\``;
    };
    for (const dialect of [duckdbDialect, postgresDialect, clickhouseDialect]) {
      for (const fn of ["json_value", "json_query"]) {
        const size = (levels: number) =>
          compileEndpoint(endpoint(nested(fn, levels)), { schema, dialect }).sql.length;
        // three levels of JSON_VALUE were 107 MB on DuckDB, 12 MB on ClickHouse, past a string's length on PostgreSQL
        expect(size(6), `${dialect.name} ${fn}`).toBeLessThan(size(1) * 12);
      }
    }
  });

  it("grows by what each level writes for every function, cast and operator that names its input more than once", () => {
    // each is a level around `x`; before their inputs were bound, each multiplied the SQL per level
    // (two CASTs to STRING and back were 457 MB on PostgreSQL, POW 27× a level, FORMAT 60×,
    // GREATEST 4×: eight levels 4.8 MB)
    const levels: Record<string, (x: string) => string> = {
      "CAST to STRING and back": (x) => `cast(cast(${x} as string) as float64)`,
      CONCAT: (x) => `cast(concat('', ${x}) as float64)`,
      FORMAT: (x) => `cast(format('%.3f', ${x}) as float64)`,
      POW: (x) => `pow(${x}, 1.01)`,
      GREATEST: (x) => `greatest(${x}, 1.5)`,
      SQRT: (x) => `sqrt(${x})`,
      MOD: (x) => `mod(cast(${x} as int64), 7)`,
      "/": (x) => `(${x}) / 2`,
      "TIMESTAMP_TRUNC in a zone": (x) =>
        `unix_micros(timestamp_trunc(timestamp_micros(cast(${x} as int64)), day, 'America/New_York'))`,
      "FORMAT_TIMESTAMP and PARSE_TIMESTAMP": (x) =>
        `unix_seconds(parse_timestamp('%F %T', format_timestamp('%F %T', timestamp_seconds(cast(${x} as int64)))))`,
    };
    for (const dialect of [duckdbDialect, postgresDialect, clickhouseDialect]) {
      for (const [name, level] of Object.entries(levels)) {
        // as deep as the parser allows (eight levels of CAST)
        let x = "1.5";
        for (let i = 0; i < (name.includes("CAST") || name === "CONCAT" || name === "FORMAT" ? 4 : 8); i++)
          x = level(x);
        const size = compileEndpoint(endpoint(`select ${x} as v`), { schema, dialect }).sql.length;
        // DuckDB and ClickHouse leave up to 64 KB of a call as written (their common subexpressions)
        expect(size, `${dialect.name} ${name}`).toBeLessThan(300_000);
      }
    }
  });

  it("past the limit of emitted SQL is sql_too_complex naming the limit, never a string past its length (a 500)", () => {
    const refusal = (sql: string, dialect: Dialect) => {
      try {
        compileEndpoint(endpoint(sql), { schema, dialect });
      } catch (e) {
        return e;
      }
      return undefined;
    };
    const tooComplex = { code: "sql_too_complex", message: expect.stringMatching(/limit is 4 MB/) };
    // ROUND's arithmetic names its argument many times (BigQuery's rounding of the binary value):
    // bound once, eight levels are a few kilobytes (PostgreSQL's were past a string's length)
    let r = "1.5";
    for (let i = 0; i < 8; i++) r = `round(${r}, 1)`;
    for (const dialect of [duckdbDialect, postgresDialect, clickhouseDialect])
      expect(compileEndpoint(endpoint(`select ${r} as v`), { schema, dialect }).sql.length).toBeLessThan(
        20_000,
      );
    // whatever a dialect writes, past the limit (or past a string's length) is refused alike
    for (const dialect of [duckdbDialect, postgresDialect, clickhouseDialect]) {
      const huge = Object.assign(Object.create(dialect) as Dialect, {
        emit: () => ({ sql: "x".repeat(4_000_001), params: [] }),
      });
      expect(refusal("select 'huge' as v", huge), dialect.name).toMatchObject(tooComplex);
      const endless = Object.assign(Object.create(dialect) as Dialect, {
        emit: () => {
          throw new RangeError("Invalid string length");
        },
      });
      expect(refusal("select 'endless' as v", endless), dialect.name).toMatchObject(tooComplex);
    }
  });
});

describe("JSON_VALUE on PostgreSQL", () => {
  it("reads the value at the path once per row, not once per mention in its number's text", () => {
    const ep = endpoint("select json_value(event_message, '$.a.b') as v from `cloudflare.logs.prod`");
    const { sql } = compileEndpoint(ep, { schema, dialect: postgresDialect });
    // qes_json_or_null starts a subtransaction: 240 calls a row took 14.7 s per 100,000 rows, 1 took 2.0 s
    expect(sql.match(/qes_json_or_null\(/g)).toHaveLength(1);
    // an aggregate is bound too (it stays the outer query's: test/sql/cases/nested.ts runs it), a
    // window function is not (inside the subquery it would see one row)
    const agg = endpoint("select json_value(max(event_message), '$.a') as v from `cloudflare.logs.prod`");
    expect(
      compileEndpoint(agg, { schema, dialect: postgresDialect }).sql.match(/qes_json_or_null\(/g),
    ).toHaveLength(1);
    const win = endpoint(
      "select json_value(max(event_message) over (order by timestamp), '$.a') as v from `cloudflare.logs.prod`",
    );
    expect(compileEndpoint(win, { schema, dialect: postgresDialect }).sql).not.toContain("OFFSET 0");
  });
});
