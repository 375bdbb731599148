import type { Dialect } from "@qes/core";

/** Placeholder: the lead replaces this with the PostgreSQL SQL emitter. */
export const postgresDialect: Dialect = { name: "postgres" };
