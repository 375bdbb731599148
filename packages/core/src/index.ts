export * from "./errors.ts";
export * from "./backend.ts";
export * from "./schema/schema-model.ts";
export * from "./wire/wire-type.ts";
export * from "./compile/compiled-query.ts";
export * from "./dialect/dialect.ts";
export * from "./endpoint/endpoint-definition.ts";
export * from "./endpoint/load-endpoints.ts";
