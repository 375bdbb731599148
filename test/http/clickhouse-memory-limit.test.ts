import { clickhouseConfigFromEnv } from "@qes/backend-clickhouse/env";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  PROJECT,
  postQuery,
  type SandboxServer,
  startSandboxServer,
} from "../sandbox/support/sandbox-server.ts";
import { clickhouseFixture } from "../support/backends.ts";

// Embedded chDB allocates inside qes's process: a consumer query past the per-query memory bound
// (QES_CLICKHOUSE_MAX_MEMORY, or the embedded default when unset) is the query's fault, a 422
// naming the bound, and the process goes on answering. Before, the embedded engine had no bound
// (one `array_agg` took the process to 5.4 GB) and the message was the engine's account of its
// threads ("Untracked memory across all threads … AggregatingTransform").

/** one million strings of ~100 characters: ~100 MB of aggregate state, one small row out */
const HUNGRY =
  "select array_length(array_agg(format('%100s', cast(t as string)))) as n from unnest(generate_timestamp_array(" +
  "timestamp '2020-01-01', timestamp_add(timestamp '2020-01-01', interval 999999 second), interval 1 second)) as t";

describe("ClickHouse per-query memory over HTTP", () => {
  let server: SandboxServer;

  beforeAll(async () => {
    const { maxMemoryBytes } = clickhouseConfigFromEnv({ QES_CLICKHOUSE_MAX_MEMORY: "32MiB" });
    server = await startSandboxServer(clickhouseFixture({ maxMemoryBytes }));
  });
  afterAll(async () => {
    await server?.close();
  });

  it("a query past QES_CLICKHOUSE_MAX_MEMORY is a 422 naming the bound; the next query is answered", async () => {
    const answer = await postQuery(server, "logs.all", { project: PROJECT, sql: HUNGRY });
    expect(answer.status, JSON.stringify(answer.body)).toBe(422);
    expect(answer.body.error.code).toBe("sql_invalid");
    expect(answer.body.error.message).toMatch(/more memory than the service allows one query \(32\.00 MiB\)/);
    expect(answer.body.error.message).not.toMatch(/Transform|Untracked|Code: 241/);
    const small = await postQuery(server, "logs.all", {
      project: PROJECT,
      sql: HUNGRY.replace("interval 999999 second", "interval 999 second"),
    });
    expect(small.status, JSON.stringify(small.body)).toBe(200);
    expect(small.body.result).toEqual([{ n: 1000 }]);
  }, 60_000);
});
