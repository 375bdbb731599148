import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { consumerCases } from "./cases/consumer/index.ts";
import { logsAllCases } from "./cases/logs-all.ts";
import { redactionCases } from "./cases/redaction.ts";
import { usageCases } from "./cases/usage-api-counts.ts";
import { rowLimitCases, wireCases } from "./cases/wire-and-limits.ts";
import type { ConformanceCase } from "./support/case.ts";
import { expectRows } from "./support/compare.ts";
import {
  type ConformanceServer,
  queryEndpoint,
  startConformanceServer,
} from "./support/conformance-server.ts";
import { conformanceLoads } from "./support/events.ts";
import { EventStore, type Row } from "./support/oracle.ts";

// The endpoint conformance matrix (issue 6): every case of the table, over HTTP, on every backend
// of test/support/backends.ts. Expected answers come from the oracle (support/oracle.ts and each
// case's function), written from SPEC.md and DESIGN.md §3–§4, never from a backend's output.

const LOADS = conformanceLoads();
const EVENTS = new EventStore(LOADS);

const GROUPS: [string, ConformanceCase[]][] = [
  ["logs.all (SPEC §4.2)", logsAllCases],
  ["usage.api-counts (SPEC §4.3)", usageCases],
  ["wire values (DESIGN §4)", wireCases],
  ["max rows and QES-Row-Limit-Reached (DESIGN §5)", rowLimitCases],
  ["consumer SQL a log dashboard sends", consumerCases],
  ["PII redaction (DESIGN §7)", redactionCases],
];

describe.each(BACKENDS)("endpoint conformance on $name", (fixture) => {
  let server: ConformanceServer;

  beforeAll(async () => {
    server = await startConformanceServer(fixture, LOADS);
  });
  afterAll(async () => {
    await server?.close();
  });

  for (const [group, cases] of GROUPS) {
    describe(group, () => {
      it.each(cases.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
        const expected = c.oracle(EVENTS);
        const params = c.sql === undefined ? c.params : { ...c.params, sql: c.sql };
        const answer = await queryEndpoint(server, c.endpoint, params, c.headers);
        expect(answer.status, JSON.stringify(answer.body).slice(0, 600)).toBe(200);
        const rows = (answer.body as { result: Row[] }).result;
        expectRows(rows, expected.rows, c.ordered ?? true);
        if (expected.columns && rows.length > 0) expect(Object.keys(rows[0]!)).toEqual(expected.columns);
        for (const [name, value] of Object.entries(expected.headers ?? {})) {
          expect(answer.headers.get(name), `header ${name}`).toBe(value);
        }
      });
    });
  }
});

describe("the conformance table", () => {
  it("holds at least 100 consumer queries, every case named once", () => {
    expect(consumerCases.length).toBeGreaterThanOrEqual(100);
    const names = GROUPS.flatMap(([, cases]) => cases.map((c) => c.name));
    expect(new Set(names).size).toBe(names.length);
  });

  it("has oracles that see data: most cases expect rows", () => {
    const empty = GROUPS.flatMap(([, cases]) => cases).filter((c) => c.oracle(EVENTS).rows.length === 0);
    expect(empty.map((c) => c.name).length).toBeLessThanOrEqual(5);
  });
});
