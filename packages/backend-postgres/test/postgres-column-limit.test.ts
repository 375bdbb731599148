import { type IngestBatch, logEventFromJson, QesError } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresBackend, type PostgresBackend } from "../src/index.ts";
import { dropStorage, ownerQuery, TEST_POSTGRES_URL, uniqueSchema } from "./helpers.ts";

const NOW = 1_736_942_400_000_000n;
const SOURCE = "wide.logs";

function batch(bodies: Record<string, unknown>[], prefix: string): IngestBatch {
  return {
    source: SOURCE,
    events: bodies.map((body, i) =>
      logEventFromJson(
        { id: `${prefix}-${i}`, timestamp: "2025-01-15T10:00:00Z", ...body },
        SOURCE,
        NOW,
        `event ${i}`,
      ),
    ),
  };
}

/** a record of 500 fields: 500 columns */
function wideRecord(): Record<string, number> {
  return Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`f${i}`, i]));
}

// PostgreSQL counts a dropped column toward its 1,600 columns per table until the table is
// rewritten: a record widened to STRING leaves its 500 columns behind
describe("PostgreSQL's 1,600 columns per table, dropped ones included", () => {
  const schema = uniqueSchema("collimit");
  let backend: PostgresBackend;
  beforeAll(async () => {
    backend = createPostgresBackend({ url: TEST_POSTGRES_URL, schema, pool: 2 });
    await backend.init();
  });
  afterAll(async () => {
    await backend.close();
    await dropStorage(schema);
  });

  it("refuses the batch whose new columns do not fit with 400 invalid_event naming the source and the cause, and stores nothing of it", async () => {
    let refused: unknown;
    let round = 0;
    for (; round < 5 && refused === undefined; round++) {
      const record = `r${round}`;
      try {
        await backend.ingest([batch([{ metadata: { [record]: wideRecord() } }], `wide${round}`)]);
        // the record widened to STRING: its 500 columns are dropped, and still counted
        await backend.ingest([batch([{ metadata: { [record]: "now text" } }], `text${round}`)]);
      } catch (e) {
        refused = e;
      }
    }
    expect(round).toBeGreaterThanOrEqual(3);
    expect(refused).toBeInstanceOf(QesError);
    const error = refused as QesError;
    expect(error.code).toBe("invalid_event");
    expect(error.message).toContain(`"${SOURCE}"`);
    expect(error.message).toMatch(/1,600 columns/);
    expect(error.message).toMatch(/widened/);
    // nothing of the refused batch is stored, and the source still takes events it has room for
    const table = (await backend.schema()).sources[SOURCE]!.table;
    const ids = await ownerQuery<{ id: string }>(
      `select id from "${schema}"."${table}" where id like 'wide${round - 1}-%'`,
    );
    expect(ids.rows).toEqual([]);
    await backend.ingest([batch([{ metadata: { r0: "still text" } }], "after")]);
    const after = await ownerQuery<{ n: string }>(
      `select count(*)::text as n from "${schema}"."${table}" where id = 'after-0'`,
    );
    expect(after.rows[0]!.n).toBe("1");
  }, 120_000);
});
