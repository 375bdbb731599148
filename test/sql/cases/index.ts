import { aggregateCases } from "./aggregates.ts";
import { basicCases } from "./basics.ts";
import type { SqlCase } from "./case.ts";
import { coercionCases } from "./coercion.ts";
import { dashboardDiffCases } from "./dashboard-diff.ts";
import { dashboardEdgeCases } from "./dashboard-edges.ts";
import { dateCases } from "./dates.ts";
import { documentedGapCases, formatElementCases } from "./documented-gaps.ts";
import { engineSemanticsCases } from "./engine-semantics.ts";
import { errorCases } from "./errors.ts";
import { findingCases, joinGroupCases, orderedLimitCases, structCases } from "./findings.ts";
import { functionCases } from "./functions.ts";
import { generatedCases } from "./generated.ts";
import { generatedAggregateCases } from "./generated-aggregates.ts";
import { matrixCases } from "./matrix.ts";
import { nestedCases } from "./nested.ts";
import { nullArgCases } from "./null-args.ts";
import { presenceCases } from "./presence.ts";
import { queryCases } from "./queries.ts";
import { regexCases } from "./regex.ts";
import { safeCases } from "./safe.ts";
import { timeCases } from "./time.ts";
import { unnestCases } from "./unnest.ts";

/** Every case of the table, grouped by file (the feature they exercise). */
export const CASE_GROUPS: Record<string, SqlCase[]> = {
  basics: basicCases,
  queries: queryCases,
  unnest: unnestCases,
  presence: presenceCases,
  aggregates: aggregateCases,
  functions: functionCases,
  time: timeCases,
  dates: dateCases,
  coercion: coercionCases,
  errors: errorCases,
  regex: regexCases,
  matrix: matrixCases,
  findings: findingCases,
  orderedLimit: orderedLimitCases,
  structs: structCases,
  joinGroups: joinGroupCases,
  engineSemantics: engineSemanticsCases,
  safe: safeCases,
  nullArgs: nullArgCases,
  nested: nestedCases,
  dashboardDiff: dashboardDiffCases,
  dashboardEdges: dashboardEdgeCases,
  documentedGaps: documentedGapCases,
  formatElements: formatElementCases,
  generated: generatedCases,
  generatedAggregates: generatedAggregateCases,
};

export const ALL_CASES: SqlCase[] = Object.values(CASE_GROUPS).flat();
