import { readFileSync } from "node:fs";
import { renderFunctionsDoc } from "@qes/core";
import { describe, expect, it } from "vitest";
import { FUNCTIONS_DOC } from "../../scripts/functions-doc.ts";
import { registeredDialects } from "../../scripts/registered-dialects.ts";

// docs/functions.md is generated (`pnpm docs:functions`); a change to the catalogue or to a
// dialect's function table must come with the regenerated file.

describe("docs/functions.md", () => {
  it("documents every registered backend's dialect", async () => {
    const names = (await registeredDialects()).map((d) => d.name);
    expect(names).toEqual(expect.arrayContaining(["duckdb", "postgres"]));
  });

  it("is what `pnpm docs:functions` writes from the catalogue and the dialects' tables (run it when this fails)", async () => {
    const expected = renderFunctionsDoc(await registeredDialects());
    expect(readFileSync(FUNCTIONS_DOC, "utf8")).toBe(expected);
  });
});
