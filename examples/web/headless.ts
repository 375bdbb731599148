/**
 * Opens pages in Debian's Chromium (`/usr/bin/chromium`, installed by scripts/ensure-chromium.sh),
 * headless and driven by playwright-core, with the flags a closed network and root need: no
 * sandbox (root), no GPU, and none of Chromium's own background connections (QUIC, component
 * updates, sync, first-run), which a machine without internet access refuses. A fresh profile
 * directory per launch, removed on close.
 *
 *   node --import tsx examples/web/headless.ts http://127.0.0.1:4100 shot.png   # a screenshot
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type BrowserContext, chromium } from "playwright-core";

export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Headless {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(
  executablePath = process.env.QES_CHROMIUM_PATH || "/usr/bin/chromium",
): Promise<Headless> {
  const profile = mkdtempSync(join(tmpdir(), "qes-chromium-"));
  // launchPersistentContext passes the fresh profile as --user-data-dir
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: CHROMIUM_FLAGS,
    timeout: 60_000,
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [url = "http://127.0.0.1:4100", out = "web-example.png"] = process.argv.slice(2);
  const browser = await launchChromium();
  try {
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 1200, height: 900 });
    await page.goto(url);
    await page.waitForSelector("body[data-ready=true]", { timeout: 30_000 });
    await page.click("#search-button");
    await page.waitForFunction("!document.querySelector('#search-status').textContent.includes('…')");
    await page.screenshot({ path: out, fullPage: true });
    console.log(`screenshot of ${url} in ${out}`);
  } finally {
    await browser.close();
  }
}
