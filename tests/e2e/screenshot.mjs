// Makes fixtures/demo/screenshot.png: the demo served by the real
// `uitraild --demo`, driven through the Blue Widget story in headless
// Chromium, with its panel showing what the assistant sees: the live
// trace, the newest line highlighted, and the prompt for a sample question.
// Usage: node tests/e2e/screenshot.mjs [OUT.png]   (UITRAILD, CHROMIUM as in tools/e2e)

import { join } from 'node:path';

import { daemonMissing, chromiumMissing, launchBrowser, REPO, sleep, startDaemon } from './lib/harness.mjs';

const out = process.argv[2] || join(REPO, 'fixtures', 'demo', 'screenshot.png');
const missing = chromiumMissing() || daemonMissing();
if (missing) {
  console.error(`screenshot: ${missing}`);
  process.exit(1);
}

const daemon = await startDaemon();
const browser = await launchBrowser();
try {
  const page = await browser.newPage();
  await page.goto(`${daemon.url}/demo/`);
  await page.waitForFunction(() => window.uitrailDemo?.dataRenderedAt > 0 && window.uitrailDemo.tracker);
  await page.click('label.chip:has-text("Active")');
  await sleep(300);
  await page.click('text=Blue Widget');
  await sleep(600);
  await page.keyboard.press('Escape');
  await sleep(600);
  await page.locator('tr', { hasText: 'Blue Widget' }).getByRole('button', { name: 'Edit Item' }).click();
  // The panel shows the trace once the daemon has the click and the page
  // has settled again.
  await page.waitForFunction(() => {
    const text = document.getElementById('panel-trace')?.textContent || '';
    const prompt = document.getElementById('panel-prompt')?.textContent || '';
    return text.includes('"Edit Item"') && text.includes('PAGE: stable') &&
      prompt.includes('"Edit Item"') && prompt.includes('PAGE: stable') && prompt.endsWith('this item?');
  }, null, { timeout: 15000 });
  await page.screenshot({ path: out });
  console.log(`screenshot: wrote ${out}`);
} finally {
  await browser.close();
  await daemon.stop();
}
