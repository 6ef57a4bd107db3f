// The trace viewer in headless Chromium (Debian's chromium, driven over the DevTools
// protocol by puppeteer-core): `reins serve --keys` with tests/ui/agent.yaml, two
// sessions made over HTTP, then the page as a person uses it - the key asked once and
// kept in sessionStorage, the sessions list, a session, its turns' timelines (a
// clarification, a rejected call, a deferred write that failed, a rail), an HTML
// payload that stays text, live updates, axe-core, the keyboard, no request leaving
// the server. Screenshots go to the build folder.
// Usage: node viewer_test.mjs REINS SOURCE_DIR TOOLS_DIR OUT_DIR
import {spawn, execFileSync} from 'node:child_process';
import {mkdtempSync, readFileSync, rmSync, mkdirSync} from 'node:fs';
import {createRequire} from 'node:module';
import {tmpdir} from 'node:os';
import path from 'node:path';

const [reins, source, tools, out] = process.argv.slice(2);
const require = createRequire(path.join(tools, 'package.json'));
const puppeteer = require('puppeteer-core');
const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

const tmp = mkdtempSync(path.join(tmpdir(), 'reins-viewer-'));
mkdirSync(out, {recursive: true});
let server = null, browser = null, serverLog = '';
const problems = [];  // failed checks; the server's log is shown when there are any
const check = (ok, what) => {
  console.log((ok ? 'ok   ' : 'FAIL ') + what);
  if (!ok) problems.push(what);
};

async function finish(code) {
  if (code !== 0 && serverLog) console.log('--- the end of reins serve\'s log:\n' + serverLog);
  if (browser) await browser.close().catch(() => {});
  if (server) server.kill('SIGTERM');
  rmSync(tmp, {recursive: true, force: true});
  process.exit(code);
}
process.on('exit', () => server && server.exitCode === null && server.kill('SIGKILL'));  // never an orphan server
process.on('unhandledRejection', (e) => {
  console.log('FAIL ' + (e && e.stack || e));
  finish(1);
});

// The server, with API keys: the page must ask for one.
const addKey = (tenant) => execFileSync(reins, ['keys', 'add', tenant, '--keys', path.join(tmp, 'keys.yaml')],
                                        {encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore']}).trim();
const key = addKey('church');
const otherKey = addKey('bakery');  // another tenant: must see none of the church's sessions
server = spawn(reins, ['serve', '--config', path.join(source, 'tests/ui/agent.yaml'), '--listen', '127.0.0.1:0',
                       '--store', 'sqlite:' + path.join(tmp, 'store.db'), '--keys', path.join(tmp, 'keys.yaml'),
                       '--heartbeat-ms', '1000', '--rate', '1000', '--burst', '1000'],
               {stdio: ['ignore', 'pipe', 'pipe']});
server.stderr.on('data', (d) => (serverLog = (serverLog + d).slice(-4000)));
const base = await new Promise((resolve, reject) => {
  let text = '';
  server.stdout.on('data', (d) => {
    text += d;
    const m = text.match(/listening on (http:\/\/[0-9.:]+)/);
    if (m) resolve(m[1]);
  });
  server.on('exit', () => reject(new Error('reins serve exited: ' + text)));
  setTimeout(() => reject(new Error('reins serve did not start: ' + text)), 60000);  // a margin for a busy machine
});

async function api(method, route, body) {
  const res = await fetch(base + route, {method, headers: {Authorization: 'Bearer ' + key, 'Content-Type': 'application/json'},
                                          body: body ? JSON.stringify(body) : undefined});
  const json = await res.json();
  if (!res.ok) throw new Error(method + ' ' + route + ': ' + res.status + ' ' + JSON.stringify(json));
  return json;
}
const turn = (id, input) => api('POST', '/v1/sessions/' + id + '/turns', {speaker: 'user', ...input});

// Session one: a question left open (pending clarification, lease held).
const open = (await api('POST', '/v1/sessions', {})).session_id;
await turn(open, {say: 'Find John'});
// Session two: one of everything.
const full = (await api('POST', '/v1/sessions', {})).session_id;
await turn(full, {say: 'Find John'});                 // 1: clarification
await turn(full, {say: 'Hello'});                     // 2: the rail rewrites the reply
await turn(full, {say: 'Please save a note'});        // 3: a deferred write that fails
await turn(full, {say: 'Read the bulletin'});         // 4: a tool result holding HTML
await turn(full, {say: 'Please pray for my mother'}); // 5: a call rejected by its schema
// Session three: longer than a session page lists at first (its newest 100 turns).
const long = (await api('POST', '/v1/sessions', {})).session_id;
for (let i = 0; i < 102; ++i) await turn(long, {say: 'Hello ' + i});

// Another tenant lists nothing and reads nothing of these.
const theirs = await (await fetch(base + '/v1/sessions', {headers: {Authorization: 'Bearer ' + otherKey}})).json();
check(Array.isArray(theirs.sessions) && theirs.sessions.length === 0, 'another tenant lists none of these sessions');
const peek = await fetch(base + '/v1/sessions/' + full + '/timeline', {headers: {Authorization: 'Bearer ' + otherKey}});
check(peek.status === 404, 'another tenant cannot read a timeline (' + peek.status + ')');

browser = await puppeteer.launch({executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
                                  args: ['--no-sandbox', '--disable-gpu', '--no-first-run']});
const page = await browser.newPage();
await page.setViewport({width: 1200, height: 900});
// Offline: every request must go to the server itself; anything else is refused and counted.
const outside = [], keyless = [];
let keyGiven = false;  // from when the right key is typed until it is forgotten
await page.setRequestInterception(true);
page.on('request', (req) => {
  const url = req.url();
  if (!url.startsWith(base + '/')) {
    outside.push(url);
    return req.abort();
  }
  if (keyGiven && url.includes('/v1/') && !req.headers().authorization) keyless.push(url);
  req.continue();
});
const dialogs = [];
page.on('dialog', async (d) => {
  dialogs.push(d.message());
  await d.dismiss();
});
const consoleErrors = [];
page.on('console', (m) => {
  if (m.type() === 'error' && !/401|Unauthorized/.test(m.text())) consoleErrors.push(m.text());
});

async function axe(what) {
  await page.evaluate(axeSource);  // through the DevTools protocol: not an inline script, so the CSP stays as it is
  const result = await page.evaluate(() => axe.run(document, {resultTypes: ['violations']}));
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  check(bad.length === 0, 'axe-core: no serious or critical finding on ' + what +
        (bad.length ? ': ' + bad.map((v) => v.id + ' (' + v.nodes.map((n) => n.target.join(' ')).join(', ') + ')').join('; ') : ''));
}

// Every control the page offers must be reached by Tab alone.
async function keyboard(what) {
  const wanted = await page.evaluate(() => {
    const all = [...document.querySelectorAll('a[href], button, input, select, textarea, [tabindex]:not([tabindex="-1"])')];
    return all.filter((e) => !e.hidden && e.offsetParent !== null).map((e, i) => (e.dataset.k = 'k' + i));
  });
  const reached = new Set();
  await page.evaluate(() => document.activeElement && document.activeElement.blur());
  for (let i = 0; i < wanted.length + 3; ++i) {
    await page.keyboard.press('Tab');
    const k = await page.evaluate(() => document.activeElement && document.activeElement.dataset.k);
    if (k) reached.add(k);
  }
  const missed = wanted.filter((k) => !reached.has(k));
  check(wanted.length > 0 && missed.length === 0, `keyboard: Tab reaches all ${wanted.length} controls on ${what}` +
        (missed.length ? ` (missed ${missed.length})` : ''));
}

const text = (sel) => page.$eval(sel, (e) => e.textContent);
// Waits a minute at most: a margin for a busy machine.
const waitText = (needle, timeout = 60000) =>
  page.waitForFunction((n) => document.querySelector('main').textContent.includes(n), {timeout}, needle);

// 1. The key, asked once.
const ui = await page.goto(base + '/ui/', {waitUntil: 'networkidle0'});
const csp = ui.headers()['content-security-policy'] || '';
check(/default-src 'none'/.test(csp) && /script-src 'self'/.test(csp) && !/unsafe/.test(csp), 'a strict Content-Security-Policy: ' + csp);
await page.waitForSelector('form.key input#key');
check((await page.$('label[for=key]')) !== null, 'the key field has a label');
await axe('the key form');
await page.type('#key', 'rk_wrong');
await page.keyboard.press('Enter');
await waitText('not accepted');
check(true, 'a wrong key is refused and said so');
await page.$eval('#key', (e) => (e.value = ''));
await page.type('#key', key);
keyGiven = true;
await page.keyboard.press('Enter');
await page.waitForSelector('main table tbody tr');
check(await page.evaluate((k) => sessionStorage.getItem('reins.api_key') === k, key), 'the key is kept in sessionStorage');
check(await page.evaluate(() => document.cookie === ''), 'no cookies');

// 2. The sessions list: status, lease and the pending question.
const rows = await page.$$eval('main tbody tr', (trs) => trs.map((tr) => tr.textContent));
check(rows.length === 3, 'the list shows the three sessions (' + rows.length + ')');
const openRow = rows.find((r) => r.includes(open)) || '';
check(openRow.includes('Which John?') && openRow.includes('contacts') && openRow.includes('awaiting_clarification'),
      'the open session shows its pending question, its lease and its status: ' + openRow);
check(openRow.includes('user: Find John'), 'the list shows who opened each session and with what words: ' + openRow);
await axe('the sessions list');
await keyboard('the sessions list');
await page.screenshot({path: path.join(out, 'viewer-sessions.png')});

// 3. A session: its turns; reached with the keyboard from the list.
await page.focus(`a[href="#/s/${full}"]`);
await page.keyboard.press('Enter');
await page.waitForFunction((id) => document.title.includes(id), {}, full);
await page.waitForSelector('main tbody tr');
check((await page.$$('main tbody tr')).length === 5, 'the session page lists its five turns');
check((await text('main')).includes('1 rejected') && (await text('main')).includes('1 fired'), 'the turn list counts the rejected call and the rail');
await axe('a session page');
await keyboard('a session page');
await page.screenshot({path: path.join(out, 'viewer-session.png'), fullPage: true});

// A long session: its newest 100 turns, then all of them on request.
await page.goto(`${base}/ui/#/s/${long}`, {waitUntil: 'networkidle0'});
await page.waitForFunction((id) => document.title.includes(id), {}, long);  // not the page before's rows
const firstRows = await page.$$eval('main tbody tr', (trs) => trs.length);
check(firstRows === 100 && (await text('main caption')).includes('newest 100 of 102'), 'a long session lists its newest 100 turns first');
await page.click('main p button');
await page.waitForFunction(() => document.querySelectorAll('main tbody tr').length === 102, {timeout: 60000})
    .then(() => check(true, '"Show all 102 turns" lists them all'), () => check(false, '"Show all" lists every turn'));

// 4. Turns: the timeline of each.
async function openTurn(n) {
  await page.goto(`${base}/ui/#/s/${full}/t/${n}`, {waitUntil: 'networkidle0'});
  await page.waitForSelector(`section.turn[data-turn="${n}"]`);
}
const outcomes = () => page.$$eval('li.step', (ls) => ls.map((l) => l.dataset.outcome));
await openTurn(1);
check((await outcomes()).includes('asked') && (await text('main')).includes('Which John?'), 'turn 1 shows the clarification and its question');
check((await text('main')).includes('John Smith'), 'turn 1 shows the options');
await openTurn(2);
const rail = await page.$eval('li.kind-rail', (l) => l.textContent).catch(() => '');
check(rail.includes('no_internal_names') && rail.includes('I checked with lookup_contacts') && rail.includes('I checked with contact search'),
      'turn 2 shows the rail with the reply before and after');
await openTurn(3);
check((await outcomes()).includes('deferred') && (await outcomes()).includes('failed after the reply') &&
      (await text('main')).includes('notes are down'), 'turn 3 shows the deferred write and its failure after the reply');
await page.screenshot({path: path.join(out, 'viewer-deferred.png'), fullPage: true});
await openTurn(5);
const rejected = await page.$eval('li.outcome-rejected', (l) => l.textContent).catch(() => '');
check(rejected.includes('save_prayer') && rejected.includes('input schema'), 'turn 5 shows the rejected call and why');
await openTurn(4);
const payload = '<img src=x onerror=alert(1)>';
check((await text('main')).split(payload).length - 1 >= 2, 'turn 4 shows the HTML payload as text (tool result and reply)');
check(await page.evaluate(() => document.querySelectorAll('img').length === 0), 'no <img> element was made from it');
await axe('a turn page');
await keyboard('a turn page');
await page.screenshot({path: path.join(out, 'viewer-turn.png'), fullPage: true});

// 5. Live: a turn made elsewhere appears without a reload.
await page.goto(`${base}/ui/#/s/${full}`, {waitUntil: 'domcontentloaded'});
await page.waitForSelector('main tbody tr');
await page.waitForFunction(() => document.getElementById('live').textContent === 'live', {timeout: 60000});
await turn(full, {say: 'Read the bulletin again'});
await page.waitForFunction(() => document.querySelectorAll('main tbody tr').length === 6, {timeout: 60000})
    .then(() => check(true, 'a new turn appears live, from the event stream'), () => check(false, 'a new turn appears live'));

// 6. A question answered in words through the OpenAI door: the turn shows the words
// and the option's title, not only its id.
const door = await fetch(base + '/v1/chat/completions', {method: 'POST',
  headers: {Authorization: 'Bearer ' + key, 'Content-Type': 'application/json', 'X-Reins-Session': open},
  body: JSON.stringify({model: 'viewer-test', messages: [{role: 'user', content: 'John Smith'}]})});
check(door.status === 200, 'the door took the answer in words (' + door.status + ')');
await page.goto(`${base}/ui/#/s/${open}/t/2`, {waitUntil: 'networkidle0'});
await page.waitForSelector('section.turn[data-turn="2"]');
const answered = await text('main');
check(answered.includes('"John Smith" (chose u_smith)') && answered.includes('John Smith (u_smith)'),
      'an answer in words shows the words and the option chosen: ' + answered.slice(0, 300));
// An accepted id shows where it came from: the tool result and the person's choice.
await turn(open, {say: 'Call Smith'});
await page.goto(`${base}/ui/#/s/${open}/t/3`, {waitUntil: 'networkidle0'});
await page.waitForSelector('section.turn[data-turn="3"]');
const called = await text('main');
check(called.includes("contact_id u_smith: the result of lookup_contacts, turn 1; the person's choice, turn 2"),
      'an accepted id shows which tool result and which answer it came from: ' + called.slice(0, 400));

// 7. A screenshot of /ui/ with keys on, as docs/trace-viewer.md shows it: the key put in
// sessionStorage before the page loads, so no form is typed in.
const shot = await browser.newPage();
await shot.evaluateOnNewDocument((k) => sessionStorage.setItem('reins.api_key', k), key);
await shot.goto(base + '/ui/', {waitUntil: 'networkidle0'});
await shot.waitForSelector('main table tbody tr');
await shot.screenshot({path: path.join(out, 'viewer-documented-screenshot.png')});
check((await shot.$('form.key')) === null, 'the documented screenshot recipe shows the sessions, not the key form');
await shot.close();

// 8. Forgetting the key asks for it again.
keyGiven = false;
await page.click('#forget');
await page.waitForSelector('form.key');
check(await page.evaluate(() => sessionStorage.getItem('reins.api_key') === null), '"Forget the API key" removes it');

check(outside.length === 0, 'no request left the server' + (outside.length ? ': ' + outside.join(', ') : ''));
check(keyless.length === 0, 'every API request carried the key once it was given' + (keyless.length ? ': ' + keyless.join(', ') : ''));
check(dialogs.length === 0, 'no script ran from the payload (no dialog)');
check(consoleErrors.length === 0, 'no console errors' + (consoleErrors.length ? ': ' + consoleErrors.join(' | ') : ''));
console.log(problems.length ? `${problems.length} checks failed` : 'the trace viewer works in chromium; screenshots in ' + out);
await finish(problems.length ? 1 : 0);
