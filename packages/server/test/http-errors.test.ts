import { QesError } from "@qes/core";
import { describe, expect, it } from "vitest";
import { toHttpError } from "../src/errors/http-errors.ts";
import { loggableUrl } from "../src/logging/request-log.ts";

describe("toHttpError", () => {
  it("answers too_many_requests with 429 and a Retry-After of whole seconds, in both formats", () => {
    const e = new QesError("too_many_requests", "the ingest queue is full", { retryAfterSeconds: 0.2 });
    const standard = toHttpError(e, "rid");
    expect(standard.status).toBe(429);
    expect(standard.headers).toEqual({ "Retry-After": "1" });
    expect(standard.body).toEqual({
      error: { code: "too_many_requests", message: "the ingest queue is full", requestId: "rid" },
    });
    const legacy = toHttpError(
      new QesError("too_many_requests", "busy", { retryAfterSeconds: 3 }),
      "rid",
      "legacy",
    );
    expect(legacy.status).toBe(429);
    expect(legacy.headers).toEqual({ "Retry-After": "3" });
    expect(toHttpError(new QesError("invalid_parameter", "x"), "rid").headers).toBeUndefined();
  });

  it("maps codes to status and the body of DESIGN.md §7", () => {
    const e = new QesError("invalid_parameter", "bad interval", {
      param: "interval",
      allowed: ["hourly", "daily"],
    });
    expect(toHttpError(e, "rid")).toEqual({
      status: 400,
      unexpected: false,
      refusal: true,
      body: {
        error: {
          code: "invalid_parameter",
          message: "bad interval",
          requestId: "rid",
          param: "interval",
          allowed: ["hourly", "daily"],
        },
      },
    });
    const sql = toHttpError(new QesError("sql_syntax", "near x", { line: 2, column: 5 }), "rid");
    expect(sql.status).toBe(422);
    expect(sql.body).toMatchObject({ error: { line: 2, column: 5 } });
    expect(toHttpError(new QesError("query_timeout", "slow"), "r").status).toBe(504);
    expect(toHttpError(new QesError("backend_unavailable", "down"), "r").status).toBe(503);
  });

  it("answers anything else as 500 internal without details", () => {
    const http = toHttpError(new Error("secret detail at /srv/x"), "rid");
    expect(http.status).toBe(500);
    expect(http.unexpected).toBe(true);
    expect(JSON.stringify(http.body)).not.toContain("secret");
    expect(http.body).toMatchObject({ error: { code: "internal", requestId: "rid" } });
    const config = toHttpError(new QesError("invalid_config", "/srv/endpoints/x.json broken"), "rid");
    expect(JSON.stringify(config.body)).not.toContain("/srv");
  });

  it("answers query errors with 200 {error: message} in the legacy format", () => {
    expect(toHttpError(new QesError("missing_parameter", "need project"), "r", "legacy")).toMatchObject({
      status: 200,
      body: { error: "need project" },
      // still a refusal: paced like one
      refusal: true,
    });
    expect(toHttpError(new QesError("query_timeout", "slow"), "r", "legacy").refusal).toBe(false);
    expect(toHttpError(new QesError("unauthorized", "no token"), "r", "legacy").status).toBe(401);
  });
});

describe("loggableUrl", () => {
  it("strips api_key in any case and keeps the rest", () => {
    expect(loggableUrl("/q/logs.all?project=a&api_key=secret&x=1")).toBe("/q/logs.all?project=a&x=1");
    expect(loggableUrl("/q/logs.all?API_Key=secret")).toBe("/q/logs.all");
    expect(loggableUrl("/q/logs.all?api%5Fkey=secret&p=1")).toBe("/q/logs.all?p=1");
    expect(loggableUrl("/q/logs.all")).toBe("/q/logs.all");
  });
});
