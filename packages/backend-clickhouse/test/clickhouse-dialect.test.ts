import {
  builtinLogSchema,
  compileEndpoint,
  type EndpointDefinition,
  type LogSchema,
  parseEvent,
  widenSchema,
} from "@qes/core";
import { beforeAll, describe, expect, it } from "vitest";
import { clickhouseDialect } from "../src/clickhouse-dialect.ts";
import { killQuerySql, queryParams } from "../src/clickhouse-executor.ts";

// The shape of the SQL the ClickHouse dialect writes where it decides safety or semantics and
// rows alone would not show it; the rows themselves are checked by the SQL case table and the
// endpoint conformance matrix, which run on ClickHouse (test/support/backends.ts).

let schema: LogSchema;
beforeAll(() => {
  schema = builtinLogSchema();
  const event = parseEvent(
    JSON.stringify({ project: "p", event_message: "x", metadata: { ids: [1, 2], request: { path: "/" } } }),
    1,
    0n,
    "test",
  )!;
  widenSchema(schema.sources["cloudflare.logs.prod"]!, event.body);
});

function compile(sql: string, params: EndpointDefinition["params"] = {}) {
  const endpoint: EndpointDefinition = {
    id: "00000000-0000-4000-8000-00000000c4a1",
    name: "clickhouse",
    sql,
    sqlFile: "clickhouse.sql",
    maxRows: 100,
    cacheTtlSeconds: 0,
    sandboxable: true,
    redactPii: false,
    params,
    version: sql,
  };
  return compileEndpoint(endpoint, { schema, dialect: clickhouseDialect });
}

function refusal(sql: string) {
  try {
    compile(sql);
  } catch (e) {
    return e as { code: string; message: string };
  }
  throw new Error(`compiled: ${sql}`);
}

const EDGE = "`cloudflare.logs.prod`";

describe("the ClickHouse dialect", () => {
  it("runs a RANGE frame past ClickHouse's 32-bit offsets over its key halved, and names the bound where no halving fits", () => {
    const sql = compile(
      `select count(*) over (order by unix_micros(timestamp) range between 3600000000 preceding and current row) as n from ${EDGE}`,
    ).sql;
    // 3600000000 halved once is 1800000000, within 2147483646
    expect(sql).toContain("* 0.5 ASC NULLS FIRST RANGE BETWEEN 1800000000 PRECEDING AND CURRENT ROW");
    const r = refusal(
      `select count(*) over (order by unix_micros(timestamp) range between 2147483649 preceding and current row) as n from ${EDGE}`,
    );
    expect(r.code).toBe("sql_invalid");
    expect(r.message).toMatch(/RANGE frame's offset up to 2147483646/);
  });

  it("escapes backslashes as well as quotes in string literals, which ClickHouse reads escapes in", () => {
    // the BigQuery literal 'a\\' is the two characters a\ : unescaped, its backslash would
    // swallow the closing quote and let the rest of the query into the string
    const sql = compile(String.raw`select concat('a\\', ' or 1 = 1 --') as s, 'it\'s' as q`).sql;
    expect(sql).toContain(String.raw`'a\\'`);
    expect(sql).toContain(String.raw`' or 1 = 1 --'`);
    expect(sql).toContain(String.raw`'it\'s'`);
  });

  it("binds request values as query parameters, never as SQL text", () => {
    const q = compile(`select id from ${EDGE} where project = @project and event_message like @project`, {
      project: { required: true, kind: "string" },
    });
    expect(q.sql).toContain("{p1:Nullable(String)}");
    expect(q.sql).not.toContain("{p2:");
    expect(queryParams(["x') or ('1"])).toEqual({ p1: "x') or ('1" });
  });

  it("casts integer and timestamp parameters from their bound text", () => {
    const q = compile(`select id from ${EDGE} where timestamp >= @since limit @n`, {
      since: { required: true, kind: "timestamp" },
      n: { required: true, kind: "integer" },
    });
    expect(q.sql).toContain("toDateTime64OrNull({p1:Nullable(String)}, 6, 'UTC')");
    // LIMIT takes a constant: a bound parameter is one, once ClickHouse knows it cannot be NULL
    expect(q.sql).toContain("LIMIT assumeNotNull(");
    expect(q.sql).toContain("toInt64OrNull({p2:Nullable(String)})");
  });

  it("expands an array with ARRAY JOIN, and LEFT JOIN UNNEST with LEFT ARRAY JOIN", () => {
    const cross = compile(`select i from ${EDGE}, unnest(metadata) m, unnest(m.ids) as i`).sql;
    expect(cross).toMatch(
      /\nARRAY JOIN arrayMap\(v -> CAST\(tuple\(v\), 'Tuple\(value Nullable\(Int64\)\)'\)/,
    );
    const left = compile(
      `select i from ${EDGE} cross join unnest(metadata) m left join unnest(m.ids) as i on true`,
    ).sql;
    expect(left).toContain("\nLEFT ARRAY JOIN ");
  });

  it("switches off ClickHouse's dot-matches-newline for literal, parameter and computed patterns", () => {
    const q = compile(
      `select regexp_contains(event_message, 'a.b') as l, regexp_contains(event_message, @p) as p, regexp_contains(event_message, concat(project, '.')) as c from ${EDGE}`,
      { p: { required: true, kind: "string" } },
    );
    expect(q.sql).toContain('match("t0"."event_message", \'(?-s)a.b\')');
    // a parameter is bound with the prefix (once per request, not a concat per block)
    expect(q.sql).toContain('match("t0"."event_message", {p1:Nullable(String)})');
    expect(q.bindPattern?.("a.b")).toBe("(?-s)a.b");
    expect(q.bindPattern?.("ab")).toBe("ab");
    expect(q.sql).toMatch(/concat\('\(\?-s\)', \(/);
  });

  it("orders the rows at a leading-key cut outside a subquery ordered by the leading key alone", () => {
    const sql = compile(`select id, metadata from ${EDGE} order by timestamp desc limit 5`).sql;
    const [inner, outer] = sql.split(') AS "__cut_rows"');
    // inside: the cut, one sort key and a LIMIT that keeps every row; the JSON text is only selected
    expect(inner).toMatch(/\nWHERE \("t0"\."timestamp" >= \(SELECT min\(/);
    expect(inner).toMatch(/\nORDER BY "t0"\."timestamp" DESC\nLIMIT toInt64\(9223372036854775807\)\n$/);
    // outside: the completed order, the JSON text last, and the query's LIMIT
    expect(outer).toMatch(
      /^\nORDER BY "__cut_rows"\."__k0" DESC, "__cut_rows"\."c0" ASC, CAST\("__cut_rows"\."c1" AS Nullable\(String\)\) ASC NULLS FIRST\nLIMIT toInt64\(5\)$/,
    );
  });

  it("cuts on the table a plain CTE filters, where ClickHouse's top-K filter applies", () => {
    const cut = (sql: string) =>
      /\(SELECT min\("__cut"\."__cut"\)[\s\S]*?\) AS "__cut"\)/.exec(compile(sql).sql)![0];
    const plain = `with e as (select id, timestamp from ${EDGE} where project = 'p') select id from e order by timestamp desc limit 5`;
    expect(cut(plain)).toMatch(
      /FROM "src_cloudflare_logs_prod" AS "t0"\nWHERE \("t0"\."project" = 'p'\)\nORDER BY "t0"\."timestamp" DESC/,
    );
    // a CTE with a LIMIT, or a WHERE on the reading side: the cut reads the CTE's rows
    for (const other of [
      `with e as (select id, timestamp from ${EDGE} order by timestamp limit 50) select id from e order by timestamp desc limit 5`,
      `with e as (select id, timestamp, project from ${EDGE}) select id from e where project = 'p' order by timestamp desc limit 5`,
    ])
      expect(cut(other)).toMatch(/\nFROM "q\d+" AS "r\d+"\n/);
  });

  it("reads a cut top-level select ahead: n+1 rows by the leading key on the table, flagged for a retry", () => {
    const plain = `with e as (select id, timestamp, metadata from ${EDGE} where project = 'p') select id, metadata from e order by timestamp desc limit 5`;
    const q = compile(plain);
    const ahead = q.readAhead!;
    // one top-K read of the table the CTE filters, no cut's subquery, the LIMIT one row past n
    expect(ahead).not.toContain('__cut"');
    expect(ahead).toMatch(
      /\nFROM "src_cloudflare_logs_prod" AS "t0"\nWHERE \("t0"\."project" = 'p'\)\nORDER BY "t0"\."timestamp" DESC\nLIMIT toInt64\(6\)\n\) AS "__read"/,
    );
    expect(ahead).toMatch(/COUNT\(\*\) OVER \(\) AS "__n", MIN\("__read"\."__k0"\) OVER \(\) AS "__last"/);
    expect(ahead).toMatch(/CASE WHEN "__cut_rows"\."__n" = 6 AND SUM\(/);
    expect(ahead).toMatch(/ AS "__retry"\nFROM/);
    // the completed order outside, and the query's own LIMIT
    expect(ahead).toMatch(
      /\nORDER BY "__cut_rows"\."__k0" DESC, "__cut_rows"\."c0" ASC, [^\n]*\nLIMIT toInt64\(5\)$/,
    );
    // the cut form stays the query's answer when the read-ahead gives up
    expect(q.sql).toMatch(/SELECT min\("__cut"\."__cut"\)/);
    // ascending: the boundary is the largest key read
    expect(compile(`select id from ${EDGE} order by timestamp limit 5`).readAhead).toMatch(
      /MAX\("__read"\."__k0"\) OVER \(\)/,
    );
    // the row cap is a LIMIT too: an unlimited select reads its cap + 1 ahead
    expect(compile(`select id from ${EDGE} order by timestamp desc`).readAhead).toContain("= 102 AND");
    // nothing to read ahead: an OFFSET, no cut (a NULL-able key), a nested select
    for (const none of [
      `select id from ${EDGE} order by timestamp desc limit 5 offset 2`,
      `select id from ${EDGE} order by id desc limit 5`,
      `select count(*) as n from (select id from ${EDGE} order by timestamp desc limit 5)`,
    ])
      expect(compile(none).readAhead).toBeUndefined();
  });

  it("kills by a marker it made, and refuses anything else as a literal", () => {
    const marker = "qes-query:0f8e3c2a-5b1d-4e6f-9a7c-1d2e3f4a5b6c";
    expect(killQuerySql(marker)).toBe(`KILL QUERY WHERE Settings['log_comment'] = '${marker}' ASYNC`);
    for (const hostile of ["x' OR 1=1 --", `${marker}'`, "qes-query:", `${marker}\\`]) {
      expect(() => killQuerySql(hostile)).toThrow("not a query marker");
    }
  });

  it("needs a time zone as a string literal or a parameter, and refuses an unknown one", () => {
    expect(refusal(`select timestamp_trunc(timestamp, day, project) as d from ${EDGE}`).message).toContain(
      "time zone must be a string literal or a parameter",
    );
    expect(refusal(`select timestamp_trunc(timestamp, day, 'Mars/Olympus') as d from ${EDGE}`).code).toBe(
      "sql_invalid",
    );
  });

  it("binds a zone parameter as a zone ClickHouse loads: offsets as fixed zones", () => {
    expect(clickhouseDialect.bindZone("Asia/Tokyo")).toBe("Asia/Tokyo");
    expect(clickhouseDialect.bindZone("+05:30")).toBe("Fixed/UTC+05:30:00");
    expect(clickhouseDialect.bindZone("UTC-3")).toBe("Fixed/UTC-03:00:00");
    expect(clickhouseDialect.bindZone("Z")).toBe("UTC");
  });
});
