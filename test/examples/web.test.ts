import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Headless, launchChromium } from "../../examples/web/headless.ts";
import { startWebServer, type WebServer } from "../../examples/web/server.ts";
import { EDGE_EVENTS } from "../e2e/support/events.ts";
import { startTestServer, type TestServer, TOKEN } from "../e2e/support/test-server.ts";
import { ROOT } from "./run-example.ts";

type Page = Awaited<ReturnType<Headless["context"]["newPage"]>>;

let server: TestServer;
let web: WebServer;
let browser: Headless;
let page: Page;
const sentHeaders: Record<string, string>[] = [];
const shots = mkdtempSync(join(tmpdir(), "qes-web-"));

beforeAll(async () => {
  // installs Debian's chromium when missing (as root), as ensure-services.sh does PostgreSQL and Redis
  const chromium = execFileSync("bash", [join(ROOT, "scripts/ensure-chromium.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    timeout: 600_000,
  }).trim();
  server = await startTestServer({ loads: { "cloudflare.logs.prod": EDGE_EVENTS } });
  web = await startWebServer({ qesUrl: server.url, apiKey: TOKEN, project: "alpha" });
  browser = await launchChromium(chromium);
  page = await browser.context.newPage();
  page.on("request", (r) => {
    sentHeaders.push(r.headers());
  });
  await page.setViewportSize({ width: 1200, height: 900 });
  await page.goto(web.url);
  await page.waitForSelector("body[data-ready=true]", { timeout: 30_000 });
}, 660_000);

afterAll(async () => {
  await browser?.close();
  await web?.close();
  await server?.close();
  rmSync(shots, { recursive: true, force: true });
});

const text = async (selector: string) => (await page.locator(selector).textContent()) ?? "";

describe("examples/web in headless Chromium", () => {
  it("charts usage.api-counts: one bar segment per series with requests", async () => {
    // alpha per minute: auth at 11:30, storage at 11:58, rest at 11:59
    expect(await page.locator("#chart svg rect").count()).toBe(3);
    expect(await page.locator("#chart rect[data-series=auth]").count()).toBe(1);
    expect(await text("#chart-status")).toBe("3 buckets, 3 requests");
    expect(await page.locator("#chart rect title").allTextContents()).toEqual([
      "2025-01-15T11:30:00 auth: 1",
      "2025-01-15T11:58:00 storage: 1",
      "2025-01-15T11:59:00 rest: 1",
    ]);
    await page.selectOption("#interval", "daily");
    await page.waitForFunction("document.querySelector('#chart-status').textContent.startsWith('2 buckets')");
    // the day before has only a functions request: a bucket of zeros, no segment
    expect(await page.locator("#chart svg rect").count()).toBe(4);
    expect(await text("#chart-status")).toBe("2 buckets, 4 requests");
  });

  it("searches the logs with consumer SQL and shows the rows", async () => {
    await page.fill("#sql", "select id, timestamp, event_message from edge_logs order by timestamp desc");
    await page.click("#search-button");
    await page.waitForFunction("document.querySelector('#search-status').textContent === '5 rows'");
    const rows = page.locator("#results tbody tr");
    expect(await rows.count()).toBe(5);
    const first = await rows.first().locator("td").allInnerTexts();
    expect(first[0]).toBe("2025-01-15T11:59:30.123456Z");
    expect(first[1]).toContain("https://alpha.supabase.co/rest/v1/todos");
    expect(first[2]).toBe("e-alpha-1");
    const ids = await page.locator("#results tbody tr td:nth-child(3)").allInnerTexts();
    expect(ids).toEqual(["e-alpha-1", "e-alpha-2", "e-alpha-3", "e-alpha-4", "e-alpha-5"]);
    await page.screenshot({ path: join(shots, "web.png"), fullPage: true });
    expect(statSync(join(shots, "web.png")).size).toBeGreaterThan(10_000);
  });

  it("shows the server's error for SQL that does not parse, and clears the rows", async () => {
    await page.fill("#sql", "select id from edge_logs where");
    await page.click("#search-button");
    await page.waitForFunction("document.querySelector('#search-status').classList.contains('error')");
    expect(await text("#search-status")).toMatch(/^sql_syntax: .+ \(line 1, column \d+\)$/);
    expect(await page.locator("#results tbody tr").count()).toBe(0);
  });

  it("never gives the browser the token: the page's server adds it", async () => {
    expect(sentHeaders.length).toBeGreaterThan(5);
    for (const h of sentHeaders) {
      expect(h["x-api-key"]).toBeUndefined();
      expect(JSON.stringify(h)).not.toContain(TOKEN);
    }
    expect(await page.content()).not.toContain(TOKEN);
  });
});
