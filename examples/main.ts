/**
 * Runs one example by name: `npx -y pnpm@10 example <usage-chart | log-tail | web> [options]`.
 */
const EXAMPLES = {
  "usage-chart": () => import("./usage-chart.ts"),
  "log-tail": () => import("./log-tail.ts"),
  web: () => import("./web/server.ts"),
} as const;

const [name, ...args] = process.argv.slice(2);
if (name === undefined || !(name in EXAMPLES)) {
  console.error(`usage: example <${Object.keys(EXAMPLES).join(" | ")}> [options]`);
  process.exitCode = 2;
} else {
  const example = await EXAMPLES[name as keyof typeof EXAMPLES]();
  process.exitCode = await example.main(args);
}
