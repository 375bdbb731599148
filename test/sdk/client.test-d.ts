import {
  createClient,
  type LogRow,
  microsToDate,
  type QesApiError,
  type QesErrorCode,
  type QueryResult,
  type UnknownRow,
  type UsageInterval,
  type UsageRow,
} from "@qes/sdk";
import { describe, expectTypeOf, it } from "vitest";
import type {
  AuthErrorsRow,
  FunctionsSlowCallsRow,
  QesEndpoints,
} from "./fixtures/qes-endpoints.generated.ts";

const qes = createClient({ baseUrl: "http://127.0.0.1:4000", apiKey: "k" });
const typed = createClient<QesEndpoints>({ baseUrl: "http://127.0.0.1:4000", apiKey: "k" });

describe("the built-in calls", () => {
  it("types logs.all rows in wire values", () => {
    expectTypeOf(qes.logsAll({ project: "p" })).resolves.toEqualTypeOf<QueryResult<LogRow>>();
    expectTypeOf<LogRow["timestamp"]>().toEqualTypeOf<number>();
    expectTypeOf<LogRow["id"]>().toEqualTypeOf<string>();
    expectTypeOf<LogRow["metadata"]>().toExtend<object[]>();
    expectTypeOf(microsToDate).parameter(0).toExtend<number | bigint | string>();
  });

  it("accepts Date or ISO string bounds and nothing else", () => {
    qes.logsAll({
      project: "p",
      isoTimestampStart: new Date(),
      isoTimestampEnd: "2025-01-15T11:00:00.123456Z",
    });
    // @ts-expect-error a number is not a timestamp parameter (µs or ms would be ambiguous)
    qes.logsAll({ project: "p", isoTimestampStart: 1736942370123456 });
    // @ts-expect-error the project is required
    qes.logsAll({ isoTimestampStart: new Date() });
    // @ts-expect-error wire names are not the typed call's parameter names
    qes.logsAll({ project: "p", iso_timestamp_start: "2025-01-15T11:00:00Z" });
    // @ts-expect-error no such parameter
    qes.logsAll({ project: "p", limit: 5 });
  });

  it("types usage.api-counts with interval as a union", () => {
    expectTypeOf(qes.usageApiCounts({ project: "p", interval: "daily" })).resolves.toEqualTypeOf<
      QueryResult<UsageRow>
    >();
    expectTypeOf<UsageInterval>().toEqualTypeOf<"hourly" | "daily" | "minutely">();
    expectTypeOf<UsageRow>().toEqualTypeOf<{
      timestamp: string;
      total_rest_requests: number;
      total_storage_requests: number;
      total_auth_requests: number;
      total_realtime_requests: number;
    }>();
    // @ts-expect-error an interval outside hourly | daily | minutely
    qes.usageApiCounts({ project: "p", interval: "weekly" });
    // @ts-expect-error the interval is required
    qes.usageApiCounts({ project: "p" });
    // @ts-expect-error a misspelt parameter name
    qes.usageApiCounts({ project: "p", intervall: "hourly" });
  });

  it("types consumer SQL rows by the caller's type", () => {
    expectTypeOf(
      qes.logsAll<{ n: number }>({ project: "p" }, { sql: "select count(*) as n from edge_logs" }),
    ).resolves.toEqualTypeOf<QueryResult<{ n: number }>>();
    expectTypeOf(qes.logsAll({ project: "p" }, { sql: "select 1 as x" })).resolves.toEqualTypeOf<
      QueryResult<UnknownRow>
    >();
    expectTypeOf(
      qes.logsAll({ project: "p" }, { signal: AbortSignal.timeout(1), redactPii: true }),
    ).resolves.toEqualTypeOf<QueryResult<LogRow>>();
  });

  it("iterates log rows", () => {
    expectTypeOf(qes.iterateLogs({ project: "p" }, { pageSize: 500 })).toEqualTypeOf<
      AsyncGenerator<LogRow, void, undefined>
    >();
    // @ts-expect-error no such option
    qes.iterateLogs({ project: "p" }, { limit: 500 });
  });
});

describe("query", () => {
  it("types the built-ins by name and id, with wire parameter names", () => {
    expectTypeOf(
      qes.query("logs.all", { project: "p", iso_timestamp_end: new Date() }),
    ).resolves.toEqualTypeOf<QueryResult<LogRow>>();
    expectTypeOf(
      qes.query("0b1e7d52-8f3a-4e6c-a1d9-5c2f7e804b63", { project: "p", interval: "minutely" }),
    ).resolves.toEqualTypeOf<QueryResult<UsageRow>>();
    // @ts-expect-error an interval outside the union, through the generic call
    qes.query("usage.api-counts", { project: "p", interval: "weekly" });
    // @ts-expect-error camelCase is the typed call's, not the wire's
    qes.query("logs.all", { project: "p", isoTimestampEnd: new Date() });
  });

  it("leaves unknown endpoints open, with the row type the caller gives", () => {
    expectTypeOf(qes.query("auth.errors", { project: "p" })).resolves.toEqualTypeOf<
      QueryResult<UnknownRow>
    >();
    expectTypeOf(
      qes.query<{ id: string }>("auth.errors", { project: "p", n: 3, at: new Date() }),
    ).resolves.toEqualTypeOf<QueryResult<{ id: string }>>();
    // @ts-expect-error parameter values are strings, numbers, booleans or Dates
    qes.query("auth.errors", { project: ["a", "b"] });
  });

  it("types custom endpoints from generated types", () => {
    expectTypeOf(typed.query("auth.errors", { project: "p" })).resolves.toEqualTypeOf<
      QueryResult<AuthErrorsRow>
    >();
    expectTypeOf(
      typed.query("3f6e2a9c-71d4-4b8e-a0c5-9d2b7e1f4a68", { project: "p" }),
    ).resolves.toEqualTypeOf<QueryResult<AuthErrorsRow>>();
    expectTypeOf(
      typed.query("functions.slow-calls", {
        project: "p",
        region: "eu-west-1",
        since: new Date(),
        min_ms: 250,
      }),
    ).resolves.toEqualTypeOf<QueryResult<FunctionsSlowCallsRow>>();
    expectTypeOf<FunctionsSlowCallsRow["duration_ms"]>().toEqualTypeOf<number | null>();
    // @ts-expect-error a misspelt parameter of a generated endpoint
    typed.query("auth.errors", { projekt: "p" });
    // @ts-expect-error a value outside the generated enum
    typed.query("functions.slow-calls", { project: "p", region: "mars-1" });
    // @ts-expect-error a required parameter is missing
    typed.query("functions.slow-calls", { project: "p" });
    // the built-ins stay typed beside them
    expectTypeOf(typed.logsAll({ project: "p" })).resolves.toEqualTypeOf<QueryResult<LogRow>>();
  });
});

describe("errors", () => {
  it("exposes status, code, requestId, param and allowed", () => {
    expectTypeOf<QesApiError["status"]>().toEqualTypeOf<number>();
    expectTypeOf<QesApiError["requestId"]>().toEqualTypeOf<string>();
    expectTypeOf<QesApiError["param"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<QesApiError["allowed"]>().toEqualTypeOf<string[] | undefined>();
    expectTypeOf<"invalid_parameter">().toExtend<QesErrorCode>();
    expectTypeOf<"query_timeout">().toExtend<QesApiError["code"]>();
  });

  it("needs a base URL", () => {
    // @ts-expect-error baseUrl is required
    createClient({ apiKey: "k" });
    // @ts-expect-error retries is a number
    createClient({ baseUrl: "http://x", retries: "3" });
  });
});
