import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { DIALECTS } from '../helpers/dialects.ts';
import { freePort, kill } from '../helpers/service-process.ts';
import { startWorld, type World } from '../calls/support/world.ts';
import { WHSEC as EVENTS_WHSEC, drain, startReceiver as startEventReceiver } from '../events/support.ts';

const PAGE = 'docs/event-hooks.md';
/** Generous: only a broken run waits this long for the receiver to start or print an event. */
const WAIT_MS = 20_000;
const WHSEC = `whsec_${Buffer.from('the receiver example test key!!!').toString('base64')}`;
const PLAIN = 'a plain text secret, used as its UTF-8 bytes';

/** The page's receiver: its one ```js block that imports standardwebhooks. */
export function receiverExample(markdown: string): string {
  const blocks = [...markdown.matchAll(/```js\n([\s\S]*?)\n```/g)].map((m) => m[1] as string).filter((b) => b.includes("from 'standardwebhooks'"));
  assert.equal(blocks.length, 1, 'one receiver example on the page');
  return blocks[0] as string;
}

interface Receiver {
  child: ChildProcess;
  url: string;
  /** Everything the process printed so far, stdout and stderr. */
  output: () => string;
  /** Resolves when the output matches, rejects when the process exits first or after WAIT_MS. */
  waitFor: (pattern: RegExp) => Promise<string>;
}

/** Runs the example as `node receiver.mjs` in dir, as the page says, and waits until it listens (when it should). */
async function runReceiver(dir: string, env: Record<string, string>): Promise<Receiver> {
  const port = await freePort();
  const child = spawn(process.execPath, ['receiver.mjs'], { cwd: dir, env: { PATH: process.env.PATH ?? '', HOOK_PORT: String(port), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const changed = new EventTarget();
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding('utf8').on('data', (c: string) => {
      output += c;
      changed.dispatchEvent(new Event('data'));
    });
  }
  child.once('exit', () => changed.dispatchEvent(new Event('data')));
  const waitFor = (pattern: RegExp) => new Promise<string>((resolveWait, reject) => {
    const check = () => {
      const match = pattern.exec(output);
      if (match) return done(() => resolveWait(match[0]));
      if (child.exitCode !== null) return done(() => reject(new Error(`the receiver exited with ${child.exitCode} before printing ${pattern}:\n${output}`)));
    };
    const timer = setTimeout(() => done(() => reject(new Error(`the receiver did not print ${pattern} within ${WAIT_MS / 1000} s:\n${output}`))), WAIT_MS);
    const done = (settle: () => void) => {
      clearTimeout(timer);
      changed.removeEventListener('data', check);
      settle();
    };
    changed.addEventListener('data', check);
    check();
  });
  return { child, url: `http://127.0.0.1:${port}`, output: () => output, waitFor };
}

describe('docs/event-hooks.md: the receiver example runs as shown', () => {
  let dir: string;
  before(() => {
    // The page says: save it as receiver.mjs beside a node_modules with standardwebhooks.
    dir = mkdtempSync(join(tmpdir(), 'parley-hook-receiver-'));
    writeFileSync(join(dir, 'receiver.mjs'), receiverExample(readFileSync(PAGE, 'utf8')));
    symlinkSync(resolve('node_modules'), join(dir, 'node_modules'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('without PARLEY_HOOK_SECRET it says what to set and exits non-zero', async () => {
    const receiver = await runReceiver(dir, {});
    const [code] = (await once(receiver.child, 'exit')) as [number | null];
    assert.equal(code, 1, receiver.output());
    assert.match(receiver.output(), /PARLEY_HOOK_SECRET is not set: set it to the secret of your call event hook/);
    assert.doesNotMatch(receiver.output(), /TypeError|at file:/, 'a message, not a stack trace');
  });

  for (const dialect of DIALECTS) {
    describe(dialect, () => {
      let world: World;
      const receivers: Receiver[] = [];
      before(async () => {
        world = await startWorld(dialect);
        world.llm.respond = () => ({ text: 'Hello.' });
      });
      after(async () => {
        await Promise.all(receivers.map((r) => kill(r.child)));
        await world.close();
      });

      it('verifies and prints the events Parley signs, with a whsec_ secret and a plain one, and refuses a tampered one with 401', async () => {
        const whsec = await runReceiver(dir, { PARLEY_HOOK_SECRET: WHSEC });
        const plain = await runReceiver(dir, { PARLEY_HOOK_SECRET: PLAIN });
        receivers.push(whsec, plain);
        await Promise.all([whsec, plain].map((r) => r.waitFor(/receiving call event hooks on port \d+/)));

        const assistant = await world.createAssistant({
          name: 'Front desk',
          callEventHooks: [
            { type: 'call_started', parameters: { url: `${whsec.url}/parley`, secret: WHSEC } },
            { type: 'call_started', parameters: { url: `${plain.url}/parley`, secret: PLAIN } },
          ],
        });
        const call = await world.open(assistant);
        call.client.close();
        await call.client.closed;
        await drain(world.t);

        for (const r of [whsec, plain]) await r.waitFor(new RegExp(`^call_started ${call.id}$`, 'm'));
        const delivered = await world.api('GET', `${world.tenant.orgPath}/webhook-deliveries?status=delivered`);
        assert.deepEqual(delivered.body.data.map((d: { lastStatusCode: number }) => d.lastStatusCode), [204, 204], JSON.stringify(delivered.body));

        // A body changed after signing (here: another call id) is refused, and not printed.
        const signer = new Webhook(WHSEC);
        const id = 'msg_tampered';
        const body = JSON.stringify({ type: 'call_started', timestamp: new Date().toISOString(), data: { callId: 'the-signed-one' } });
        const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': signer.sign(id, new Date(), body), 'content-type': 'application/json' };
        const tampered = await fetch(`${whsec.url}/parley`, { method: 'POST', headers, body: body.replace('the-signed-one', 'another-one') });
        assert.equal(tampered.status, 401);
        const unsigned = await fetch(`${whsec.url}/parley`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        assert.equal(unsigned.status, 401);
        // The same request untampered passes: the 401s were the signature's doing.
        const genuine = await fetch(`${whsec.url}/parley`, { method: 'POST', headers, body });
        assert.equal(genuine.status, 204);
        await whsec.waitFor(/^call_started the-signed-one$/m);
        assert.doesNotMatch(whsec.output(), /another-one/);
      });

      it('names in its table exactly the data fields Parley sends with each call event (the failed call\'s failure included)', { timeout: 60_000 }, async () => {
        const documented = documentedFields(readFileSync(resolve(PAGE), 'utf8'));
        const receiver = await startEventReceiver(() => 204);
        try {
          const types = ['call_started', 'call_ended', 'transcript_ready'];
          const assistant = await world.createAssistant({
            name: 'Documented', systemPromptGreeting: 'Hello!',
            callEventHooks: types.map((type) => ({ type, parameters: { url: `${receiver.url}/${type}`, secret: EVENTS_WHSEC } })),
          });
          // The LLM endpoint fails: the call ends as an error, with the failure call_ended carries.
          world.llm.respond = () => ({ status: 500, errorMessage: 'the model is down' });
          const call = await world.open(assistant);
          call.client.send({ type: 'user_message', text: 'Hello?' });
          await call.client.closed;
          world.llm.respond = () => ({ text: 'Hello.' });
          await drain(world.t);
          const sent = new Map(receiver.received.map((r) => {
            const body = JSON.parse(r.body) as { type: string; data: Record<string, unknown> };
            return [body.type, body.data];
          }));
          for (const type of types) {
            const data = sent.get(type);
            assert.ok(data, `a ${type} event was delivered`);
            assert.deepEqual(Object.keys(data).sort(), documented.get(type), `docs/event-hooks.md's data of ${type}`);
          }
          assert.equal((sent.get('call_ended')?.failure as { source?: string } | undefined)?.source, 'llm');
        } finally {
          await receiver.close();
        }
      });
    });
  }
});

/** The fields the page's table lists under `data`, by event type: the backquoted names outside parentheses. */
function documentedFields(markdown: string): Map<string, string[]> {
  const fields = new Map<string, string[]>();
  for (const [, type, cell] of markdown.matchAll(/^\| `(\w+)` \|[^|]*\|[^|]*\| (.*) \|$/gm)) {
    const names = [...(cell as string).replace(/\([^()]*(\([^()]*\)[^()]*)*\)/g, '').matchAll(/`(\w+)`/g)].map((m) => m[1] as string);
    fields.set(type as string, names.sort());
  }
  return fields;
}
