// `reins serve` driven by the official `openai` npm SDK, as a team's chat UI would drive
// it: only the base URL changes. Usage (tests/server/openai_sdk_test.sh runs it):
//   node openai_sdk_test.mjs REINS_BINARY SOURCE_DIR SDK_DIR
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [reins, sourceDir, sdkDir] = process.argv.slice(2);
const { default: OpenAI, AuthenticationError, RateLimitError, ConflictError, NotFoundError, BadRequestError } =
  await import(join(sdkDir, 'node_modules/openai/index.mjs'));

const model = 'serve-test';  // tests/server/agent.yaml's name
let server, base, key, limitedKey, dir, pharmacy;

// `reins serve` of an agent file on a free port, with the test's keys and a store in dir.
async function serve(config, store) {
  const child = spawn(reins, ['serve', '--config', config, '--listen', '127.0.0.1:0', '--keys', join(dir, 'keys.yaml'),
                              '--store', `sqlite:${join(dir, store)}`],
                      { cwd: sourceDir, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d) => { log += d; });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`reins serve exited (${code}): ${log}`)));
  });
  return { child, url };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'reins-sdk-'));
  const keys = join(dir, 'keys.yaml');
  const addKey = (tenant) => execFileSync(reins, ['keys', 'add', tenant, '--keys', keys], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  key = addKey('acme');
  limitedKey = addKey('limited');
  ({ child: server, url: base } = await serve('tests/server/agent.yaml', 'reins.db'));
  pharmacy = await serve('tests/server/approvals_agent.yaml', 'approvals.db');
});

after(() => {
  server?.kill('SIGTERM');
  pharmacy?.child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

const client = (options = {}) => new OpenAI({ apiKey: key, baseURL: `${base}/v1`, maxRetries: 0, ...options });
const say = (text) => ({ role: 'user', content: text });
const answer = (text) => ({ role: 'assistant', content: text });

// A session's turns as reins stored them (its own API, with the same key).
async function turns(sessionId, at = base) {
  const res = await fetch(`${at}/v1/sessions/${sessionId}/trace`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(res.status, 200);
  return (await res.json()).turns;
}

test('the agent is the model', async () => {
  const models = await client().models.list();
  assert.deepEqual(models.data.map((m) => m.id), [model]);
  await assert.rejects(client().chat.completions.create({ model: 'gpt-4o', messages: [say('hi')] }),
                       (e) => e instanceof NotFoundError && e.code === 'model_not_found');
});

test('a completion is the governed reply, and the history continues its session', async () => {
  const first = await client().chat.completions.create({ model, messages: [{ role: 'system', content: 'be a pirate' }, say('hi from a stateless UI')] });
  assert.equal(first.object, 'chat.completion');
  assert.equal(first.choices[0].finish_reason, 'stop');
  assert.equal(first.choices[0].message.content, 'Hello there.');
  assert.match(first.id, /^chatcmpl-t_/);
  const session = first.reins.session_id;
  // The client resends everything, as stateless clients do: same session, no header.
  const { data: second, response } = await client().chat.completions.create({
    model, messages: [say('hi from a stateless UI'), answer(first.choices[0].message.content), say('Please pray for my mother')],
  }).withResponse();
  assert.equal(response.headers.get('x-reins-session'), session);
  assert.equal(second.reins.session_id, session);
  assert.equal(second.choices[0].message.content, "I'm so sorry. The team will pray for her.");
  const stored = await turns(session);
  assert.deepEqual(stored.map((t) => t.input.say), ['hi from a stateless UI', 'Please pray for my mother']);
  assert.ok(stored[1].events.some((e) => e.type === 'deferred.executed'), 'the deferred write ran');
});

test('a streamed completion carries the governed deltas, then usage and [DONE]', async () => {
  const stream = await client().chat.completions.create({
    model, stream: true, stream_options: { include_usage: true }, messages: [say('Please pray for my mother, streamed')],
  });
  let text = '', deltas = 0, usage = null, finish = null, ext = null;
  for await (const chunk of stream) {
    assert.equal(chunk.object, 'chat.completion.chunk');
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      if (choice.delta.content) { text += choice.delta.content; ++deltas; }
      if (choice.finish_reason) { finish = choice.finish_reason; ext = chunk.reins; }
    }
  }
  assert.equal(text, "I'm so sorry. The team will pray for her.");
  assert.ok(deltas >= 2, `sentence by sentence (${deltas} deltas)`);
  assert.equal(finish, 'stop');
  assert.deepEqual(Object.keys(usage).sort(), ['completion_tokens', 'prompt_tokens', 'total_tokens']);
  assert.equal(ext.status, 'completed');
});

test('a clarification is answered by id, by title, by number and by the line shown; an answer that fits two asks again', async () => {
  const opening = [say('hi, about contacts'), answer('Hello there.')];
  await client().chat.completions.create({ model, messages: [opening[0]] });
  const asked = await client().chat.completions.create({ model, messages: [...opening, say('Who is John?')] });
  assert.equal(asked.choices[0].message.content, 'Which John?\n1. John Doe\n2. John Smith');
  assert.deepEqual(asked.reins.clarification.options.map((o) => o.id), ['u_doe', 'u_smith']);
  const session = asked.reins.session_id;
  let history = [...opening, say('Who is John?'), answer(asked.choices[0].message.content)];
  // "john" fits both: the question again, numbered, and no turn runs.
  const unsure = await client().chat.completions.create({ model, messages: [...history, say('john')] });
  assert.equal(unsure.reins.status, 'awaiting_clarification');
  assert.match(unsure.choices[0].message.content, /^I could not tell which one you mean\. Which John\? Answer with its number:\n1\. John Doe\n2\. John Smith$/);
  assert.equal((await turns(session)).length, 2, 'asking again is no turn');
  // The same request again: asked again, never guessed.
  const resent = await client().chat.completions.create({ model, messages: [...history, say('john')] });
  assert.equal(resent.choices[0].message.content, unsure.choices[0].message.content);
  history = [...history, say('john'), answer(unsure.choices[0].message.content)];
  // This fixture's model looks the contacts up again after each answer, so the question comes back.
  const answers = ['u_doe', 'john SMITH', '1', '2. John Smith'];
  for (const text of answers) {
    const next = await client().chat.completions.create({ model, messages: [...history, say(text)] });
    assert.equal(next.reins.session_id, session, text);
    history = [...history, say(text), answer(next.choices[0].message.content)];
  }
  const inputs = (await turns(session)).map((t) => t.input);
  assert.deepEqual(inputs.slice(2).map((i) => i.select), ['u_doe', 'u_smith', 'u_doe', 'u_smith']);
});

test('an approval is asked in its words and answered yes, no, or with edits through the reins extension', async () => {
  const pharmacist = new OpenAI({ apiKey: key, baseURL: `${pharmacy.url}/v1`, maxRetries: 0 });
  const ask = (messages, extra = {}) => pharmacist.chat.completions.create({ model: 'approvals-test', messages, ...extra });
  const asked = await ask([say('a refill please')]);
  assert.equal(asked.reins.status, 'awaiting_approval');
  assert.equal(asked.reins.approval.prompt, 'Refill metformin: 120 units?');
  assert.match(asked.choices[0].message.content, /Refill metformin: 120 units\?/);
  assert.doesNotMatch(asked.choices[0].message.content, /[{}]|refill\(/, 'no JSON, no tool name');
  const session = asked.reins.session_id;
  let history = [say('a refill please'), answer(asked.choices[0].message.content)];
  const unsure = await ask([...history, say('hmm, maybe')]);
  assert.equal(unsure.choices[0].message.content, 'Please answer yes or no. Refill metformin: 120 units?');
  assert.equal((await turns(session, pharmacy.url)).length, 1, 'asking again is no turn');
  history = [...history, say('hmm, maybe'), answer(unsure.choices[0].message.content)];
  // Yes, but 60 units: the reins extension carries the edit.
  const edited = await ask([...history, say('yes, but 60')], { reins: { approve: { decision: true, args: { quantity: 60 } } } });
  assert.equal(edited.reins.status, 'completed');
  const stored = await turns(session, pharmacy.url);
  const ran = stored[1].events.find((e) => e.type === 'tool.executed');
  assert.deepEqual(ran.data.args, { drug: 'metformin', quantity: 60 });
  // A typed yes and a typed no.
  history = [...history, say('yes, but 60'), answer(edited.choices[0].message.content)];
  for (const [typed, decided] of [['yes please', 'approval.granted'], ['no thanks', 'approval.denied']]) {
    const again = await ask([...history, say('another refill')]);
    assert.equal(again.reins.status, 'awaiting_approval');
    history = [...history, say('another refill'), answer(again.choices[0].message.content)];
    const answered = await ask([...history, say(typed)]);
    history = [...history, say(typed), answer(answered.choices[0].message.content)];
    const last = (await turns(session, pharmacy.url)).at(-1);
    assert.ok(last.events.some((e) => e.type === decided), `${typed}: ${JSON.stringify(last.events.map((e) => e.type))}`);
  }
});

test('a 401 and a 429 are the SDK\'s own errors', async () => {
  await assert.rejects(client({ apiKey: 'rk_not_a_key' }).models.list(), (e) => e instanceof AuthenticationError && e.status === 401);
  // More requests at once than the key's burst (40), however slow this machine is.
  const limited = client({ apiKey: limitedKey });
  const answers = await Promise.allSettled(Array.from({ length: 80 }, () => limited.models.list()));
  const refused = answers.find((a) => a.status === 'rejected')?.reason;
  assert.ok(refused instanceof RateLimitError, `got ${refused}`);
  assert.equal(refused.code, 'rate_limited');
  assert.ok(Number(refused.headers.get('retry-after')) >= 1);
});

test('client tools are refused: the agent owns its tools', async () => {
  await assert.rejects(client().chat.completions.create({
    model, messages: [say('hi')], tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
  }), (e) => e instanceof BadRequestError && e.code === 'client_tools_unsupported');
});

test('an SDK retry after a timeout runs nothing twice', async () => {
  const opening = [say('hi, a long one follows'), answer('Hello there.')];
  const first = await client().chat.completions.create({ model, messages: [opening[0]] });
  // slow_lookup takes 600 ms: the first try times out at 400 ms, the SDK retries the
  // same request, and reins answers it with the first try's stored result. (Retries
  // enough that a busy machine, where a replay too may miss 400 ms, gets its answer.)
  const patient = client({ timeout: 400, maxRetries: 8 });
  const { data, response } = await patient.chat.completions.create({ model, messages: [...opening, say('something slow')] }).withResponse();
  assert.equal(response.headers.get('idempotent-replay'), 'true');
  assert.equal(data.choices[0].message.content, "I'm so sorry. The team will pray for her.");
  const stored = await turns(first.reins.session_id);
  assert.equal(stored.filter((t) => t.input.say === 'something slow').length, 1);
  assert.equal(stored.filter((t) => t.events.some((e) => e.type === 'tool.executed')).length, 1);
});

// The worked example of docs/openai-endpoint.md: a stateless UI that names its person
// with `user` continues each conversation by its history alone, even when two people
// opened with the same words.
test('two people who both said "Hi" continue their own conversations by `user`', async () => {
  const opening = [say('Hi')];
  const ann = await client().chat.completions.create({ model, messages: opening, user: 'person-ann' });
  const bob = await client().chat.completions.create({ model, messages: opening, user: 'person-bob' });
  assert.notEqual(ann.reins.session_id, bob.reins.session_id);
  const next = (first) => [...opening, answer(first.choices[0].message.content), say('Who is John?')];
  const ann2 = await client().chat.completions.create({ model, messages: next(ann), user: 'person-ann' });
  const bob2 = await client().chat.completions.create({ model, messages: next(bob), user: 'person-bob' });
  assert.equal(ann2.reins.session_id, ann.reins.session_id);
  assert.equal(bob2.reins.session_id, bob.reins.session_id);
});

test('two anonymous clients with the same first exchange are kept apart', async () => {
  const a = await client().chat.completions.create({ model, messages: [say('hello twins')] });
  const b = await client().chat.completions.create({ model, messages: [say('hello twins')] });
  assert.notEqual(a.reins.session_id, b.reins.session_id);
  const next = [say('hello twins'), answer('Hello there.'), say('whose session is this?')];
  await assert.rejects(client({ maxRetries: 2 }).chat.completions.create({ model, messages: next }),
                       (e) => e instanceof ConflictError && e.code === 'conversation_ambiguous');
  const withHeader = (id) => client({ defaultHeaders: { 'X-Reins-Session': id } });
  const a2 = await withHeader(a.reins.session_id).chat.completions.create({ model, messages: next });
  const b2 = await withHeader(b.reins.session_id).chat.completions.create({ model, messages: next });
  assert.equal(a2.reins.session_id, a.reins.session_id);
  assert.equal(b2.reins.session_id, b.reins.session_id);
  assert.equal((await turns(a.reins.session_id)).length, 2);
  assert.equal((await turns(b.reins.session_id)).length, 2);
});
