/**
 * Debian's Chromium driven by playwright-core (nothing downloads a browser), with a guard that
 * records every console error, page error, failed request and unexpected 4xx/5xx answer, so a
 * test can fail on any of them; axe-core for accessibility; screenshots in four looks.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const AXE_SOURCE = readFileSync(fileURLToPath(import.meta.resolve('axe-core/axe.min.js')), 'utf8');

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Everything that went wrong in the page that no test step said to expect. */
  problems: string[];
  /** The next answer with this status to a URL matching `url` is expected (a deliberate API error). */
  expectFailure(url: RegExp, status: number): void;
  /** Failures armed with expectFailure that never came. */
  unmet(): string[];
  close(): Promise<void>;
}

/** Chromium on a fresh profile; `args` are added to its command line (a fake microphone, say). */
export async function openBrowser(baseUrl: string, args: readonly string[] = []): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'parley-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: [...ARGS, ...args], baseURL: baseUrl, viewport: { width: 1280, height: 900 }, colorScheme: 'light',
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(15_000);
  const problems: string[] = [];
  const expected: { url: RegExp; status: number }[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // Chromium logs every 4xx/5xx answer as a console error too; those are judged by URL below.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource: the server responded with a status of')) {
      problems.push(`console error: ${message.text()}`);
    }
  });
  page.on('requestfailed', (request) => {
    const error = request.failure()?.errorText ?? '';
    // A read the browser itself dropped (the test went to another page while it was in flight) is
    // no fault of the console; a dropped write is, and so is any request the network or server failed.
    if (error === 'net::ERR_ABORTED' && request.method() === 'GET') return;
    problems.push(`request failed: ${request.method()} ${request.url()} ${error}`);
  });
  page.on('response', (response) => {
    if (response.status() < 400) return;
    const at = expected.findIndex((e) => e.status === response.status() && e.url.test(response.url()));
    if (at >= 0) expected.splice(at, 1);
    else problems.push(`unexpected ${response.status()} for ${response.request().method()} ${response.url()}`);
  });
  return {
    context, page, problems,
    expectFailure: (url, status) => void expected.push({ url, status }),
    unmet: () => expected.map((e) => `${e.status} ${e.url}`),
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

interface AxeResult {
  violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[];
}

/** Serious and critical axe-core violations of the page as it is now. */
export async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the page's CSP (no inline script) stays on.
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate<AxeResult>('axe.run(document, { resultTypes: ["violations"] })');
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
}

export const LOOKS = [
  { width: 1280, height: 900, scheme: 'light' },
  { width: 1280, height: 900, scheme: 'dark' },
  { width: 390, height: 844, scheme: 'light' },
  { width: 390, height: 844, scheme: 'dark' },
] as const;

/**
 * Screenshots of the page in every look under `dir`, and axe-core in both themes. Returns the
 * violations found; the page is left at 1280 px, light.
 */
export async function captureLooks(page: Page, dir: string, name: string): Promise<string[]> {
  mkdirSync(join(dir, 'docs'), { recursive: true });
  const violations: string[] = [];
  for (const look of LOOKS) {
    await page.setViewportSize({ width: look.width, height: look.height });
    await page.emulateMedia({ colorScheme: look.scheme });
    await page.screenshot({ path: join(dir, `${name}-${look.width}-${look.scheme}.png`), fullPage: true, animations: 'disabled' });
    // The first screenful at 1280 px, light: small enough for docs/console/.
    if (look.width === 1280 && look.scheme === 'light') await page.screenshot({ path: join(dir, 'docs', `${name}.png`), animations: 'disabled' });
    if (look.width === 1280 || look.scheme === 'light') violations.push(...(await axeViolations(page)).map((v) => `${name} (${look.scheme}): ${v}`));
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.emulateMedia({ colorScheme: 'light' });
  return violations;
}
