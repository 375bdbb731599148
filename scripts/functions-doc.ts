import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderFunctionsDoc } from "../packages/core/src/index.ts";
import { registeredDialects } from "./registered-dialects.ts";

/** `pnpm docs:functions`: writes docs/functions.md from the catalogue and every dialect's table. */
export const FUNCTIONS_DOC = join(import.meta.dirname, "../docs/functions.md");

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(FUNCTIONS_DOC, renderFunctionsDoc(await registeredDialects()));
  process.stdout.write(`wrote ${FUNCTIONS_DOC}\n`);
}
