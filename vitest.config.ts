import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Vitest's default on a 2-core machine is one worker (cores - 1): 13-14 min for the suite.
    // Two halve it (6-8 min, also with the machine otherwise busy), which the tests allow: each
    // file makes its own PostgreSQL schemas, Redis prefixes and temporary files.
    maxWorkers: 2,
    env: { NODE_ENV: "test" },
    // type tests (`*.test-d.ts`: expectTypeOf, @ts-expect-error) run by tsc beside the others
    typecheck: {
      enabled: true,
      include: ["packages/*/test/**/*.test-d.ts", "test/**/*.test-d.ts"],
      tsconfig: "test/sdk/tsconfig.typecheck.json",
    },
  },
});
