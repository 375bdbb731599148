/** A stored query: `<name>.sql` plus `<name>.json` beside it (DESIGN.md §2). */
export type ParamKind = "string" | "timestamp" | "integer";

export interface ParamSpec {
  required: boolean;
  kind: ParamKind;
  /** the only values accepted, when present */
  allowed?: string[];
  /** used when the request does not carry the parameter */
  default?: string;
  description?: string;
}

export interface EndpointDefinition {
  /** fixed UUID */
  id: string;
  /** dotted name, e.g. `logs.all` */
  name: string;
  description?: string;
  /** BigQuery SQL with `@name` parameters */
  sql: string;
  /** where the SQL came from, for error messages */
  sqlFile: string;
  maxRows: number;
  /** 0 = caching disabled */
  cacheTtlSeconds: number;
  /** absent = no warming */
  warmIntervalSeconds?: number;
  /** consumer SQL (`sql` parameter) allowed */
  sandboxable: boolean;
  redactPii: boolean;
  params: Record<string, ParamSpec>;
  /** hash of both files */
  version: string;
}
