import { type Dialect, QesError } from "@qes/core";

/** Placeholder: the lead replaces this with the PostgreSQL SQL emitter. */
export const postgresDialect: Dialect = {
  name: "postgres",
  emit() {
    throw new QesError("internal", "the PostgreSQL SQL emitter is not written yet");
  },
};
