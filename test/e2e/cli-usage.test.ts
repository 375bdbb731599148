import { describe, expect, it } from "vitest";
import { runCli } from "./support/run-cli.ts";

// The CLI's answers to a person asking for help or mistyping: usage on stdout and exit 0 for a
// question; a message naming the mistake, the usage and exit 2 for a mistake — never a stack trace.

describe("qes usage", () => {
  it("answers --help after a command with the usage and exit 0", async () => {
    for (const args of [["load", "--help"], ["serve", "-h"], ["--help"]]) {
      const r = await runCli(args);
      expect(r.code, args.join(" ")).toBe(0);
      expect(r.stdout).toContain("usage: qes");
      expect(r.stderr).toBe("");
    }
  });

  it("names an unknown option or command with the usage, exit 2 and no stack trace", async () => {
    const option = await runCli(["load", "--bogus"]);
    expect(option.code).toBe(2);
    expect(option.stderr).toContain("Unknown option '--bogus'");
    expect(option.stderr).toContain("usage: qes");
    expect(option.stderr).not.toMatch(/\n\s+at /);
    const command = await runCli(["nope"]);
    expect(command.code).toBe(2);
    expect(command.stderr).toContain('unknown command "nope"');
  });
});
