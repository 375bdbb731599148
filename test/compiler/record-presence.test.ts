import { clickhouseDialect } from "@qes/backend-clickhouse";
import { duckdbDialect } from "@qes/backend-duckdb";
import { postgresDialect } from "@qes/backend-postgres";
import {
  builtinLogSchema,
  compileEndpoint,
  type EndpointDefinition,
  type LogSchema,
  parseEvent,
  widenSchema,
} from "@qes/core";
import { beforeAll, describe, expect, it } from "vitest";
import { EDGE_LINES, PG_LINES } from "../sql/events.ts";
import { builtinRegistry } from "../support/run-endpoint.ts";

// CROSS JOIN UNNEST(record) adds a presence test (`<flag> IS NOT NULL`) to the WHERE; the compiler
// drops it where the WHERE clause rejects NULL in a field below that record
// (compile/record-presence.ts, compile/null-rejection.ts). The rows of the same queries are in
// test/sql/cases/presence.ts, on every backend.

const DIALECTS = [duckdbDialect, postgresDialect, clickhouseDialect];
const PG = "`postgres.logs`";
const EDGE = "`cloudflare.logs.prod`";
const PARSED = `${PG} as t, unnest(t.metadata) as m, unnest(m.parsed) as p`;
const REQUEST = `${EDGE} as t, unnest(t.metadata) as m, unnest(m.request) as r`;

let schema: LogSchema;
beforeAll(() => {
  schema = builtinLogSchema();
  for (const [source, lines] of [
    ["postgres.logs", PG_LINES],
    ["cloudflare.logs.prod", EDGE_LINES],
  ] as const) {
    lines.forEach((line, i) => {
      widenSchema(schema.sources[source]!, parseEvent(line, i, 0n, source)!.body);
    });
  }
});

function column(source: string, path: string[]): string {
  let fields = schema.sources[source]!.fields;
  let col = "";
  for (const name of path) {
    col = fields[name]!.column!;
    fields = fields[name]!.fields ?? {};
  }
  return col;
}

const parsedTest = () => `"${column("postgres.logs", ["metadata", "parsed"])}" IS NOT NULL`;
const requestTest = () => `"${column("cloudflare.logs.prod", ["metadata", "request"])}" IS NOT NULL`;
const metadataTest = (source: string) => `"${column(source, ["metadata"])}" IS NOT NULL`;

function endpoint(sql: string): EndpointDefinition {
  return {
    id: "00000000-0000-4000-8000-00000000e5a2",
    name: "presence",
    sql,
    sqlFile: "presence.sql",
    maxRows: 100,
    cacheTtlSeconds: 0,
    sandboxable: true,
    redactPii: false,
    params: {},
    version: sql,
  };
}

function sqlOn(query: string): string[] {
  return DIALECTS.map((dialect) => compileEndpoint(endpoint(query), { schema, dialect }).sql);
}

describe("presence tests of CROSS JOIN UNNEST(record)", () => {
  it.each([
    ["a comparison", `select t.id from ${PARSED} where p.process_id > 100`],
    [
      "a comparison AND-ed with others",
      `select t.id from ${PARSED} where t.project = 'a' and p.process_id > 100`,
    ],
    ["IS NOT NULL", `select t.id from ${PARSED} where p.backend_type is not null`],
    [
      "OR of conditions on the same record",
      `select t.id from ${PARSED} where p.process_id > 200 or p.backend_type = 'x'`,
    ],
    ["NOT IN", `select t.id from ${PARSED} where p.error_severity not in ('LOG')`],
    ["NOT of a strict function", `select t.id from ${PARSED} where not starts_with(p.error_severity, 'L')`],
    ["a cast to the literal's type", `select t.id from ${PARSED} where p.process_id = '101'`],
  ])("is dropped where the WHERE rejects NULL in one of its fields: %s", (_what, query) => {
    for (const sql of sqlOn(query)) {
      expect(sql).not.toContain(parsedTest());
      expect(sql).not.toContain(metadataTest("postgres.logs"));
    }
  });

  it("is dropped for a record below the unnested one, and regexp_contains implies it", () => {
    for (const query of [
      `select t.id from ${REQUEST} where r.headers.user_agent like 'curl%'`,
      `select t.id from ${REQUEST} where regexp_contains(r.url, 'alpha')`,
    ])
      for (const sql of sqlOn(query)) {
        expect(sql).not.toContain(requestTest());
        expect(sql).not.toContain(metadataTest("cloudflare.logs.prod"));
      }
  });

  it.each([
    ["IS NULL", `select t.id from ${PARSED} where p.process_id is null`],
    ["COALESCE", `select t.id from ${PARSED} where coalesce(p.error_severity, 'none') = 'none'`],
    ["IFNULL", `select t.id from ${PARSED} where ifnull(p.backend_type, '-') = '-'`],
    [
      "CASE",
      `select t.id from ${PARSED} where case when p.process_id is null then true else p.process_id > 200 end`,
    ],
    ["OR with another record", `select t.id from ${PARSED} where p.process_id > 100 or m.host = 'x'`],
    ["OR with IS NULL", `select t.id from ${PARSED} where p.process_id > 100 or p.process_id is null`],
    ["a condition on the parent record", `select t.id from ${PARSED} where m.host = 'db-default'`],
    [
      "a condition inside a subquery",
      `select t.id from ${PARSED} where not exists (select 1 from \`postgREST.logs.prod\` as x where p.process_id > 100)`,
    ],
    [
      "a condition in a LEFT JOIN's ON",
      `select t.id from ${PARSED} left join \`postgREST.logs.prod\` as x on x.id = p.error_severity where t.id is not null`,
    ],
    ["no WHERE", `select t.id from ${PARSED}`],
  ])("stays where the WHERE does not imply it: %s", (_what, query) => {
    for (const sql of sqlOn(query)) expect(sql).toContain(parsedTest());
  });

  it("is dropped only for the row the condition reads (a self-join)", () => {
    const query = `select t.id from ${PARSED} cross join ${PG} as u, unnest(u.metadata) as um, unnest(um.parsed) as up where up.process_id > 100`;
    for (const sql of sqlOn(query)) {
      expect(sql).toContain(`"t0".${parsedTest()}`);
      expect(sql).not.toContain(`"t1".${parsedTest()}`);
    }
  });

  it("guards LEFT JOIN UNNEST's fields instead, whatever the WHERE says", () => {
    const query = `select t.id from ${PG} as t, unnest(t.metadata) as m left join unnest(m.parsed) as p on true where p.process_id > 100`;
    for (const sql of sqlOn(query)) {
      expect(sql).toContain(`CASE WHEN "t0".${parsedTest()} THEN`);
      expect(sql).toContain(metadataTest("postgres.logs"));
    }
  });

  it("leaves usage.api-counts no presence test: regexp_contains(r.url, @project) implies it", async () => {
    const usage = (await builtinRegistry()).get("usage.api-counts")!;
    for (const dialect of DIALECTS) {
      const { sql } = compileEndpoint(usage, { schema, dialect });
      expect(sql).not.toContain(requestTest());
      expect(sql).not.toContain(metadataTest("cloudflare.logs.prod"));
    }
  });
});
