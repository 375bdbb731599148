import { createConfig, lintFromString } from "@redocly/openapi-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";
import { FIXTURES } from "./support/in-process.ts";

const QUERY_TOKEN = "lint-query-token-0123456789";
const INGEST_TOKEN = "lint-ingest-token-0123456789";

/** Redocly CLI's `recommended` ruleset, run in process and offline over the served document */
async function lint(doc: unknown): Promise<string[]> {
  const config = await createConfig({ extends: ["recommended"] });
  const problems = await lintFromString({
    source: JSON.stringify(doc),
    absoluteRef: "/openapi.json",
    config,
  });
  return problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? "?"}`);
}

let served: ServedFixture;
beforeAll(async () => {
  served = await serveFixture(
    BACKENDS[0]!,
    {},
    {
      QES_API_KEYS: QUERY_TOKEN,
      QES_INGEST_KEYS: INGEST_TOKEN,
      QES_ENDPOINTS_DIR: FIXTURES,
    },
  );
});
afterAll(() => served.close());

const documentFor = async (token: string) => {
  const res = await fetch(`${served.url}/api/openapi.json`, { headers: { "X-API-KEY": token } });
  expect(res.status).toBe(200);
  return (await res.json()) as any;
};

describe("/api/openapi.json under Redocly's recommended rules", () => {
  it("has no error and no warning with every endpoint listed", async () => {
    const doc = await documentFor(QUERY_TOKEN);
    expect(
      Object.keys(doc.paths).filter((p) => p.startsWith("/api/endpoints/query/")).length,
    ).toBeGreaterThan(2);
    expect(await lint(doc)).toEqual([]);
  });

  it("has no error and no warning for an ingest token, which sees no endpoint", async () => {
    const doc = await documentFor(INGEST_TOKEN);
    expect(Object.keys(doc.paths).filter((p) => p.startsWith("/api/endpoints/query/"))).toEqual([]);
    expect(await lint(doc)).toEqual([]);
  });

  it("documents POST /api/logs: source_name, both body types, and its 4xx answers", async () => {
    const doc = await documentFor(QUERY_TOKEN);
    const op = doc.paths["/api/logs"].post;
    expect(op.operationId).toBe("ingestLogs");
    expect(op.parameters.find((p: any) => p.name === "source_name")).toMatchObject({
      in: "query",
      required: true,
    });
    expect(Object.keys(op.requestBody.content).sort()).toEqual(["application/json", "application/x-ndjson"]);
    expect(Object.keys(op.responses).sort()).toEqual([
      "200",
      "400",
      "401",
      "403",
      "413",
      "415",
      "429",
      "503",
    ]);
    expect(op.responses["429"].headers["Retry-After"]).toBeDefined();
    expect(op.description).toContain(String(10 * 1024 * 1024));
  });

  it("lists every way POST /api/logs takes its token, the api_key parameter shippers use included", async () => {
    const doc = await documentFor(QUERY_TOKEN);
    const viaParameter = await fetch(`${served.url}/api/logs?source_name=lint.src&api_key=${INGEST_TOKEN}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: '[{"event_message":"by api_key"}]',
    });
    expect(viaParameter.status).toBe(200);
    expect(doc.components.securitySchemes.apiKeyQuery).toMatchObject({ in: "query", name: "api_key" });
    expect(doc.paths["/api/logs"].post.security).toEqual([
      { apiKey: [] },
      { bearer: [] },
      { apiKeyQuery: [] },
    ]);
  });

  it("still finds problems: the check is not vacuous", async () => {
    const doc = await documentFor(QUERY_TOKEN);
    delete doc.servers;
    delete doc.paths["/health"].get.operationId;
    const problems = await lint(doc);
    expect(problems.some((p) => p.startsWith("error no-empty-servers"))).toBe(true);
    expect(problems.some((p) => p.includes("operation-operationId"))).toBe(true);
  });
});
