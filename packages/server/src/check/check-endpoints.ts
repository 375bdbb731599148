import {
  compileEndpoint,
  type Dialect,
  type EndpointDefinition,
  isQesError,
  type LogSchema,
} from "@qes/core";

/** A definition that does not compile, located in its file. */
export interface EndpointProblem {
  endpoint: string;
  file: string;
  line?: number;
  column?: number;
  code: string;
  message: string;
}

/**
 * Compiles and sandbox-checks every definition against the store's schema and the backend's
 * dialect (DESIGN.md §2): what `qes check` reports and what stops start-up.
 */
export function checkEndpoints(
  definitions: readonly EndpointDefinition[],
  schema: LogSchema,
  dialect: Dialect,
): EndpointProblem[] {
  const problems: EndpointProblem[] = [];
  for (const def of definitions) {
    try {
      compileEndpoint(def, { schema, dialect });
    } catch (e) {
      const problem: EndpointProblem = {
        endpoint: def.name,
        file: isQesError(e) && e.file !== undefined ? e.file : def.sqlFile,
        code: isQesError(e) ? e.code : "internal",
        message: e instanceof Error ? e.message : String(e),
      };
      if (isQesError(e)) {
        if (e.line !== undefined) problem.line = e.line;
        if (e.column !== undefined) problem.column = e.column;
      }
      problems.push(problem);
    }
  }
  return problems;
}

/** `file:line:column: code: message`, as compilers print it */
export function formatProblem(p: EndpointProblem): string {
  const where = p.line === undefined ? p.file : `${p.file}:${p.line}:${p.column ?? 1}`;
  return `${where}: ${p.code}: ${p.message}`;
}
