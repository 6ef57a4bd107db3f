// The peer job as a hand-written loop on Node's built-in fetch: no framework, only HTTP
// and JSON. It is the floor for any agent written in Node, and the figure reins is
// compared with in the same run (reins_peer_job starts it; bench/peer_job/README.md).
//
//   node --expose-gc bare_loop.mjs --mode cpu|tput|mem|growth --url http://127.0.0.1:PORT/v1 [--turns N]
//        [--history H --tools T --samples S]
//
// cpu:  300 turns to warm up, then N one after another; CPU (process.cpuUsage) per turn.
// tput: 500 to warm up, then 3,000 with 64 in flight; turns per second.
// mem:  300 to warm up and a full GC, prints "warm", waits for "go" on stdin (the driver
//       reads the RSS baseline and slows the mock down), runs 1,000 turns at once.
// growth: 300 turns to warm up, then S conversations, each with H earlier turns and then
//       its next turn, measured alone; T tools declared (lookup_weather and T - 1 refund
//       tools the model never calls, as reins_peer_job's agent for that cell declares).
import { createInterface } from 'node:readline';

const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, a, i, all) =>
  a.startsWith('--') ? [...pairs, [a.slice(2), all[i + 1]]] : pairs, []));
const url = `${args.url}/chat/completions`;
const turns = Number(args.turns ?? 2000);

const TOOLS = [{
  type: 'function',
  function: {
    name: 'lookup_weather',
    description: 'Looks up the current weather in a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  },
}];
for (let i = 2; i <= Number(args.tools ?? 1); ++i) {
  TOOLS.push({
    type: 'function',
    function: {
      name: `refund_order_${i}`,
      description: 'Refunds part of an order and tells the customer why.',
      parameters: {
        type: 'object',
        properties: {
          customer_id: { type: 'string', description: 'The customer, as the CRM names them' },
          amount: { type: 'number', minimum: 0 },
          reason: { type: 'string', enum: ['damaged', 'late', 'wrong_item'] },
          notify: { type: 'boolean' },
        },
        required: ['customer_id', 'amount'],
      },
    },
  });
}
const lookupWeather = () => ({ temp: 21, sky: 'sunny' });

async function complete(messages) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer mock' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages, tools: TOOLS }),
  });
  if (!response.ok) throw new Error(`model: HTTP ${response.status}: ${await response.text()}`);
  return (await response.json()).choices[0].message;
}

// One turn of the conversation `messages` (a new one by default), which it extends.
async function turn(messages = [{ role: 'system', content: 'You are a helpful assistant.' }]) {
  messages.push({ role: 'user', content: 'What is the weather in Paris?' });
  for (let round = 0; round < 5; ++round) {
    const message = await complete(messages);
    if (!message.tool_calls?.length) {
      if (message.content !== 'It is sunny in Paris.') throw new Error(`unexpected reply: ${message.content}`);
      messages.push(message);
      return;
    }
    messages.push(message);
    for (const call of message.tool_calls) {
      JSON.parse(call.function.arguments);
      messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(lookupWeather()) });
    }
  }
  throw new Error('no reply after 5 rounds');
}

async function sequential(n) { for (let i = 0; i < n; ++i) await turn(); }

async function concurrent(n, width) {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => { while (next++ < n) await turn(); }));
}

const print = (result) => console.log(JSON.stringify({ runtime: 'bare Node loop', ...result }));

if (args.mode === 'cpu') {
  await sequential(300);
  const before = process.cpuUsage();
  await sequential(turns);
  const used = process.cpuUsage(before);
  print({ mode: 'cpu', turns, cpu_us_per_turn: (used.user + used.system) / turns, kernel_us_per_turn: used.system / turns });
} else if (args.mode === 'tput') {
  await concurrent(500, 64);
  const start = process.hrtime.bigint();
  await concurrent(3000, 64);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  print({ mode: 'tput', turns: 3000, turns_per_s: 3000 / seconds });
} else if (args.mode === 'mem') {
  await sequential(300);
  globalThis.gc?.();
  console.log('warm');
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) if (line.trim() === 'go') break;
  await Promise.all(Array.from({ length: 1000 }, turn));
  print({ mode: 'mem', turns: 1000 });
  process.exit(0);
} else if (args.mode === 'growth') {
  const history = Number(args.history), samples = Number(args.samples);
  await sequential(300);
  let used = 0;
  for (let s = 0; s < samples; ++s) {
    const messages = [{ role: 'system', content: 'You are a helpful assistant.' }];
    for (let i = 0; i < history; ++i) await turn(messages);
    const before = process.cpuUsage();
    await turn(messages);
    const spent = process.cpuUsage(before);
    used += spent.user + spent.system;
  }
  print({ mode: 'growth', history, tools: TOOLS.length, samples, cpu_us_per_turn: used / samples });
} else {
  console.error('usage: node --expose-gc bare_loop.mjs --mode cpu|tput|mem|growth --url URL [--turns N] ' +
                '[--history H --tools T --samples S]');
  process.exit(2);
}
