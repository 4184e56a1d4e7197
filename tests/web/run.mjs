// Browser tests of `gpuplan serve`: Playwright (playwright-core) drives Debian's Chromium against
// the real server, started here on a free loopback port with a fresh database seeded from the
// bundled catalog. Usage: node run.mjs GPUPLAN_BINARY SCREENSHOT_DIR
// Exit 0 all passed, 1 a check failed, 77 skipped (playwright-core or chromium not installed:
// `npm ci` in tests/web, `apt-get install chromium`).
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

let chromium;
try {
  ({ chromium } = await import('playwright-core'));
} catch {
  console.log('SKIP: playwright-core is not installed (cd tests/web && npm ci)');
  process.exit(77);
}
if (!existsSync('/usr/bin/chromium')) {
  console.log('SKIP: /usr/bin/chromium is not installed');
  process.exit(77);
}

const [binary, shots] = process.argv.slice(2);
mkdirSync(shots, { recursive: true });
const dir = mkdtempSync(join(tmpdir(), 'gpuplan-web-'));
const server = spawn(binary, ['--db', join(dir, 'offers.sqlite'), 'serve', '--listen', '127.0.0.1:0', '--threads', '4'],
                     { env: { ...process.env, XDG_DATA_HOME: dir }, stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise((resolve, reject) => {
  const rl = createInterface({ input: server.stdout });
  rl.once('line', (line) => resolve(Number(line.slice(line.lastIndexOf(':') + 1).replace(/\/.*/, ''))));
  server.once('exit', (code) => reject(new Error('server exited ' + code)));
});
const base = `http://127.0.0.1:${port}`;

let failures = 0;
function check(ok, what) {
  console.log((ok ? 'ok   ' : 'FAIL ') + what);
  if (!ok) failures++;
}

const context = await chromium.launchPersistentContext(join(dir, 'chromium-profile'), {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
         '--disable-sync', '--no-first-run'],
  viewport: { width: 1280, height: 900 },
});
const page = context.pages()[0] || (await context.newPage());
const shot = (name) => page.screenshot({ path: join(shots, name + '.png'), fullPage: true });

try {
  // Offers: filter with the filter language, sort by a column without reload, open a history.
  await page.goto(base + '/en/offers');
  await shot('offers-en');
  await page.fill('#q', 'gpu=H100 gpus>=8');
  await Promise.all([page.waitForNavigation(), page.click('#offers-form button[type=submit]')]);
  const gpus = await page.$$eval('#offers tbody tr td:first-child', (tds) => tds.map((t) => t.textContent));
  check(gpus.length > 0 && gpus.every((g) => g.includes('H100')), `filter gpu=H100 gpus>=8 keeps only H100 rows (${gpus.length})`);
  const counts = await page.$$eval('#offers tbody tr td:nth-child(2)', (tds) => tds.map((t) => Number(t.textContent)));
  check(counts.every((n) => n >= 8), 'filter keeps only offers with 8 or more GPUs');
  await page.click('#offers thead th:nth-child(4)');
  await page.click('#offers thead th:nth-child(4)');  // descending
  const desc = await page.$$eval('#offers tbody tr td:nth-child(4)', (tds) => tds.map((t) => Number(t.dataset.value)));
  check(desc.length > 1 && desc.every((v, i) => i === 0 || desc[i - 1] >= v), 'clicking the per-GPU-hour header twice sorts descending');
  await page.fill('#quick', 'zzz-no-such-provider');
  const visible = await page.$$eval('#offers tbody tr', (trs) => trs.filter((t) => !t.hidden).length);
  check(visible === 0, 'the quick filter hides rows that do not match, without reload');
  const total = await page.$$eval('#offers tbody tr', (trs) => trs.length);
  const note = await page.textContent('#quick-note');
  check(await page.isVisible('#quick-note') && note.startsWith('0 of the ' + total + ' rows on this page'),
        'the quick filter says it searched only the rows of this page (trial 8): ' + note);
  await page.fill('#quick', '');
  check(!(await page.isVisible('#quick-note')), 'the note goes when the quick filter is empty');
  await shot('offers-filtered');
  await Promise.all([page.waitForNavigation(), page.click('#offers tbody tr:first-child a.history')]);
  check((await page.$$('table tbody tr')).length > 0, 'an offer\'s history lists its observations');
  check((await page.$('svg.chart')) !== null || (await page.textContent('main')).includes('No dated price'), 'the history draws an SVG chart');
  await shot('history');

  // Sizing form.
  await page.goto(base + '/en/size');
  await page.selectOption('select[name=model]', 'llama-3.1-70b');
  await page.selectOption('select[name=task]', 'qlora');
  // 1024-token sequences: at the default 4096 (sizing/workload_defaults.hpp) without recomputation
  // no single catalog GPU count holds 70B QLoRA (`gpuplan size --model llama-3.1-70b --task qlora`).
  await page.fill('input[name=seq]', '1024');
  await Promise.all([page.waitForNavigation(), page.click('#size-form button[type=submit]')]);
  check((await page.$('#size-result svg.bar rect')) !== null, 'the sizing form shows the stacked memory bar');
  check((await page.$$('#fits tbody tr')).length > 0, 'the sizing form lists GPUs that hold it');
  await shot('size');
  // No GPU count holds it at 4096 tokens without recomputation: the page says so, and what would fit.
  await page.fill('input[name=seq]', '4096');
  await Promise.all([page.waitForNavigation(), page.click('#size-form button[type=submit]')]);
  check((await page.$('#no-fit')) !== null && (await page.$('#fits')) === null, 'a job no GPU holds says so instead of an empty table');
  check((await page.$$('#alternatives li')).length > 0, 'and lists the changes that would make it fit');
  await shot('size-no-fit');

  // Plan form.
  await page.goto(base + '/en/plan');
  await page.selectOption('select[name=model]', 'llama-3.1-70b');
  await page.selectOption('select[name=task]', 'lora');
  await page.fill('input[name=tokens]', '5e8');
  await Promise.all([page.waitForNavigation(), page.click('#plan-form button[type=submit]')]);
  check((await page.$('#plans tr.recommended')) !== null, 'the plan form ranks plans and marks the recommendation');
  check((await page.$('#plan-result svg.chart circle')) !== null, 'the plan form draws the cost/time chart');
  await shot('plan');
  await Promise.all([page.waitForNavigation(), page.click('#plans tr.recommended a.explain')]);
  check((await page.$$('#explain tbody tr')).length > 3, 'a plan\'s numbers are explained on demand');
  // Serving through the form's own fields (a trial of 2026-12-02: serving plans showed a training
  // layout "TP1 PP1 DP1 Z0" and the form had no concurrency, latency targets or quantization).
  await page.goto(base + '/en/plan');
  await page.selectOption('select[name=model]', 'llama-3.1-8b');
  await page.selectOption('select[name=task]', 'serve');
  await page.fill('input[name=concurrency]', '32');
  await page.fill('input[name=tpot_ms]', '50');
  await page.selectOption('select[name=quant]', 'fp8');
  await Promise.all([page.waitForNavigation(), page.click('#plan-form button[type=submit]')]);
  const layouts = await page.$$eval('#plans td.layout', (tds) => tds.map((t) => t.textContent));
  check(layouts.length > 0 && layouts.every((l) => /^TP\d+/.test(l) && !/PP|DP|Z\d/.test(l)),
        'serving plans show the serving layout, not a training one: ' + layouts.slice(0, 3).join(' | '));
  check((await page.$$('#plans td.ttft')).length === layouts.length && (await page.$$('#plans td.replicas')).length === layouts.length,
        'each serving plan shows its replicas and time to first token');
  check(await page.inputValue('input[name=tpot_ms]') === '50' && await page.inputValue('select[name=quant]') === 'fp8',
        'the plan form keeps the serving fields it was given');
  await shot('plan-serve');

  // The assistant in French and in Thai.
  await page.goto(base + '/fr/assistant');
  await page.fill('#ask', 'affiner Llama 3.1 70B en QLoRA sur 200 millions de jetons en deux jours pour moins de 500 $');
  await Promise.all([page.waitForNavigation(), page.click('#ask-form button[type=submit]')]);
  check(await page.inputValue('#understood input[name=model]') === 'llama-3.1-70b', 'FR: the assistant read the model');
  check(Number(await page.inputValue('#understood input[name=tokens]')) === 2e8, 'FR: the assistant read 200 millions de jetons');
  check((await page.$$('#plans tbody tr')).length > 0, 'FR: the assistant answers with plans');
  check((await page.getAttribute('html', 'lang')) === 'fr', 'FR page is in French');
  await shot('assistant-fr');
  await page.goto(base + '/th/assistant');
  await page.fill('#ask', 'ไฟน์จูน Llama 3.1 8B ด้วย LoRA บน 100 ล้านโทเคน');
  await Promise.all([page.waitForNavigation(), page.click('#ask-form button[type=submit]')]);
  check(await page.inputValue('#understood input[name=model]') === 'llama-3.1-8b', 'TH: the assistant read the model');
  check(Number(await page.inputValue('#understood input[name=tokens]')) === 1e8, 'TH: the assistant read 100 ล้านโทเคน');
  await shot('assistant-th');
  await page.goto(base + '/th/assistant?q=' + encodeURIComponent('ให้บริการโมเดล'));
  check((await page.$$('#understood input[required]')).length > 0, 'TH: the assistant asks only for what is missing');

  // Languages: switcher, URL and Accept-Language.
  await page.goto(base + '/en/offers');
  await Promise.all([page.waitForNavigation(), page.click('.langs a[data-lang=fr]')]);
  check(page.url().endsWith('/fr/offers') && (await page.textContent('h1')) === 'Offres', 'the switcher opens the same page in French');
  await Promise.all([page.waitForNavigation(), page.click('.langs a[data-lang=th]')]);
  check((await page.textContent('h1')) === 'ข้อเสนอ', 'the switcher opens the same page in Thai');
  await shot('offers-th');
  const thai = await context.newPage();
  await thai.setExtraHTTPHeaders({ 'Accept-Language': 'th-TH,th;q=0.9' });
  await thai.goto(base + '/');
  check((await thai.getAttribute('html', 'lang')) === 'th', 'Accept-Language: th chooses Thai at /');
  await thai.close();

  for (const [name, path] of [['index-en', '/en/'], ['training-en', '/en/training'], ['generative-ai-fr', '/fr/generative-ai'],
                              ['large-model-training-th', '/th/large-model-training'], ['index-th', '/th/']]) {
    await page.goto(base + path);
    check((await page.$$('main h1')).length === 1, `${path} renders`);
    await shot(name);
  }
  check((await page.$$eval('link[href^=http], script[src^=http]', (e) => e.length)) === 0, 'no CDN or external asset');

  // A 390 px phone (trial 9: the workload, offers and plan pages scrolled sideways): the page is
  // never wider than the screen; a wide table scrolls inside its own box (.scroll-x), and does scroll.
  const phone = await context.newPage();
  await phone.setViewportSize({ width: 390, height: 844 });
  for (const path of ['/en/training', '/fr/generative-ai', '/th/large-model-training', '/en/offers', '/fr/offers',
                      '/en/plan?model=llama-3.1-70b&task=lora&tokens=5e8', '/th/size?model=llama-3.1-70b&task=qlora']) {
    await phone.goto(base + path);
    const [scrollWidth, clientWidth, widestBox] = await phone.evaluate(() => [
      document.documentElement.scrollWidth, document.documentElement.clientWidth,
      Math.max(0, ...[...document.querySelectorAll('.scroll-x')].map((d) => d.scrollWidth - d.clientWidth))]);
    check(scrollWidth <= clientWidth, `390 px: ${path} does not scroll sideways (page ${scrollWidth} px wide in ${clientWidth})`);
    if (!path.includes('/size')) check(widestBox > 0, `390 px: ${path}'s table scrolls inside its box (${widestBox} px more)`);
  }
  await phone.close();
  // The icon: linked by every page and answered at /favicon.ico (no 404 in the server's log).
  check((await page.getAttribute('link[rel=icon]', 'href')) === '/static/favicon.svg', 'pages link the icon');
  for (const path of ['/favicon.ico', '/static/favicon.svg']) {
    const icon = await page.request.get(base + path);
    check(icon.status() === 200 && icon.headers()['content-type'] === 'image/svg+xml' && (await icon.text()).startsWith('<svg'),
          `${path} is the SVG icon (${icon.status()} ${icon.headers()['content-type']})`);
  }
} catch (e) {
  console.log('FAIL ' + e.message);
  failures++;
} finally {
  await context.close();
  server.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
console.log(failures ? `${failures} check(s) failed` : 'all browser checks passed');
process.exit(failures ? 1 : 0);
