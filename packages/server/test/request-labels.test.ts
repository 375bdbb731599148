import { describe, expect, it } from "vitest";
import { QUERY_ROUTE_PREFIX, requestLabels, requestLineFields } from "../src/http/request-labels.ts";

// The full path (express middleware) and the cache-hit path in front of it take their metric
// labels and log fields from these functions: one place to change for both.
describe("request labels shared by the full path and the cache-hit path", () => {
  it("labels every query URL (with or without a query string) as the query route", () => {
    const url = `${QUERY_ROUTE_PREFIX}logs.all?project=a`;
    expect(requestLabels(url, "logs.all", "duckdb", 200, "HIT")).toEqual({
      route: "query",
      endpoint: "logs.all",
      backend: "duckdb",
      status: "200",
      cache: "HIT",
    });
    expect(requestLabels("/metrics", undefined, "postgres", 401, "").route).toBe("/metrics");
    // a path a caller invents never becomes a label value
    expect(requestLabels("/api/anything-at-all", undefined, "duckdb", 404, undefined)).toMatchObject({
      route: "other",
      endpoint: "",
      cache: "",
    });
  });

  it("gives the log line's fields in one shape, without an endpoint when there is none", () => {
    expect(requestLineFields("GET", "/x", 200, "logs.all")).toEqual({
      method: "GET",
      url: "/x",
      status: 200,
      endpoint: "logs.all",
    });
    expect(requestLineFields("GET", "/x", 404, undefined)).toEqual({ method: "GET", url: "/x", status: 404 });
  });
});
