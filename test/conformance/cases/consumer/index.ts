import type { ConformanceCase } from "../../support/case.ts";
import { edgeCases } from "./edge.ts";
import { joinCases } from "./joins.ts";
import { perSourceCases } from "./per-source.ts";
import { serviceCases } from "./services.ts";

/** every consumer query of the table: the kinds a log dashboard sends */
export const consumerCases: ConformanceCase[] = [
  ...perSourceCases,
  ...edgeCases,
  ...serviceCases,
  ...joinCases,
];
