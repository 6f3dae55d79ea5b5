import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { DIALECTS, createTestDatabase, type TestDatabase } from '../helpers/dialects.ts';
import { stopLabLeftovers } from '../helpers/lab.ts';
import { freePort } from '../helpers/service-process.ts';
import { startLlmServer, type LlmServer } from '../calls/support/llm-server.ts';

const PAGE = 'docs/getting-started.md';
/** The one line the test changes: the page's LLM endpoint (step 9, after the demo model's conversation) becomes the scripted fake LLM. */
const LLM_LINE = /^LLM_BASE_URL=.*the docs test puts its scripted fake LLM here.*$/m;
const SKIP = '<!-- not run by the test';
const TIMEOUT_MS = 180_000;

/** The page's ```sh blocks in order, without those it marks as not run by the test. */
export function shellBlocks(markdown: string): string[] {
  const blocks: string[] = [];
  const fence = /(<!--[^\n]*-->\n)?```sh\n([\s\S]*?)\n```/g;
  for (const match of markdown.matchAll(fence)) {
    if (!match[1]?.startsWith(SKIP)) blocks.push(match[2] as string);
  }
  return blocks;
}

/**
 * A folder that looks like a fresh checkout to `npx parley` (package.json, bin, dist,
 * node_modules and the sdk and console workspaces, without which npm refuses to run), so the files the
 * page writes land there, not in the repository.
 */
function checkoutLookalike(): string {
  const dir = mkdtempSync(join(tmpdir(), 'parley-getting-started-'));
  for (const name of ['package.json', 'bin', 'dist', 'node_modules', 'sdk', 'console']) symlinkSync(resolve(name), join(dir, name));
  return dir;
}

interface Run {
  code: number | null;
  output: string;
}

/** Runs the script with bash in its own process group; the group is killed at the end (the page leaves servers running until its last block). */
function runBash(script: string, cwd: string, env: Record<string, string>): Promise<Run> {
  return new Promise((resolveRun) => {
    const child = spawn('bash', ['-c', script], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => {
      output += `\n[test] the page did not finish within ${TIMEOUT_MS / 1000} s`;
      process.kill(-child.pid!, 'SIGKILL');
    }, TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // the group is gone already: the page stopped its servers itself
      }
      resolveRun({ code, output });
    });
  });
}

describe('docs/getting-started.md runs as written', () => {
  const markdown = readFileSync(PAGE, 'utf8');

  it('has the blocks of a first hour, and marks the line the test changes', () => {
    const blocks = shellBlocks(markdown);
    assert.ok(blocks.length >= 8, `found ${blocks.length} blocks`);
    assert.match(markdown, LLM_LINE);
    for (const step of ['npx parley lab', 'npx parley serve', 'npx parley setup', 'npx parley chat', 'PARLEY_EGRESS_ALLOW=127.0.0.0/8', '/readyz', '--fail-with-body', '"provider\\":\\"openai_compatible']) {
      assert.ok(blocks.some((b) => b.includes(step)), step);
    }
    assert.doesNotMatch(markdown, /node -pe/, 'no one-liners that turn an API error into a TypeError');
    const firstChat = blocks.findIndex((b) => b.includes('npx parley chat'));
    assert.ok(firstChat > 0 && blocks.slice(0, firstChat + 1).every((b) => !/OPENAI_BASE_URL=|OPENAI_API_KEY=|LLM_BASE_URL=/.test(b)), 'the first conversation needs no LLM: the demo model answers');
  });

  for (const dialect of DIALECTS) {
    describe(dialect, () => {
      let database: TestDatabase;
      let llm: LlmServer;
      let dir: string;
      before(async () => {
        database = await createTestDatabase(dialect);
        llm = await startLlmServer();
        // The LLM looks the order up once, then says what the tool answered.
        llm.respond = (body) => {
          const last = body.messages.at(-1);
          if (last.role === 'user') return { toolCalls: [{ id: 'call_a17', name: 'lookup_order', arguments: '{"orderNumber":"A-17"}' }] };
          return { text: `Order A-17: ${last.content}` };
        };
        dir = checkoutLookalike();
      });
      after(async () => {
        stopLabLeftovers(join(dir, 'data', 'lab'));
        await llm.close();
        await database.drop();
        rmSync(dir, { recursive: true, force: true });
      });

      it('from the service start to a conversation with a tool call and its record', async () => {
        const script = ['set -euo pipefail', ...shellBlocks(markdown)].join('\n').replace(LLM_LINE, `LLM_BASE_URL=${llm.baseUrl}`);
        const env: Record<string, string> = {
          PATH: process.env.PATH ?? '',
          HOME: dir,
          PORT: String(await freePort()),
          TOOL_PORT: String(await freePort()),
          // "Make a phone ring": the service's SIP endpoint on a free port, its RTP on this file's range (docs/testing.md).
          PARLEY_SIP_PORT: '0',
          PARLEY_RTP_PORTS: '27200-27249',
          DATABASE_URL: database.url,
          ...(dialect === 'postgres' ? { PARLEY_SECRET_KEY: randomBytes(32).toString('base64') } : {}),
        };
        const run = await runBash(script, dir, env);
        assert.equal(run.code, 0, run.output);

        // The service's first lines (the page prints its log) say what is in effect, never a value: at first the demo model and no STT.
        assert.match(run.output, /"msg":"admin token: from PARLEY_ADMIN_TOKEN"/);
        assert.match(run.output, /"msg":"egress: PARLEY_EGRESS_ALLOW lets .* reach 127\.0\.0\.0\/8"/);
        assert.match(run.output, /"msg":"LLM endpoint: the built-in demo model \(neither OPENAI_BASE_URL nor OPENAI_API_KEY is set\)/);
        assert.match(run.output, /"check":"stt","msg":"STT: none: voice calls of strategies naming no transcriber are refused at start/);
        assert.match(run.output, /"check":"tts","msg":"TTS: eSpeak NG, built in/);
        // The first conversation: the demo model calls the tool with the caller's words and reads its answer back, once saying what it is.
        assert.match(run.output, /assistant: Hello! Which order can I look up for you\?/);
        assert.match(run.output, /tool call {3}lookup_order \{"orderNumber":"A-17"\}/);
        assert.match(run.output, /tool result lookup_order: ok, HTTP 200/);
        assert.match(run.output, /assistant: lookup_order answered: order A-17, status shipped, arrives tomorrow\. I am Parley's built-in demo model/);
        const callId = /^call id: (\S+)$/m.exec(run.output)?.[1];
        assert.ok(callId, run.output);
        // The record printed by step 8 is the call's, ended by the client, with the tool's answer in its transcript.
        const record = JSON.parse(/^\{"success":true.*$/m.exec(run.output.slice(run.output.indexOf('call id:')))?.[0] ?? 'null');
        assert.equal(record.data.id, callId);
        assert.equal(record.data.endReason, 'client_ended');
        assert.deepEqual(record.data.toolInvocations.map((t: { name: string }) => t.name), ['lookup_order']);
        assert.match(readFileSync(join(dir, 'tool-server.log'), 'utf8'), /lookup_order\(\{"orderNumber":"A-17"\}\) for call /);
        // Step 9: the organization's own LLM (here the scripted fake), named by the strategy, answers the same question with its model.
        const real = run.output.slice(run.output.indexOf('call id:'));
        assert.match(real, /assistant: Order A-17: \{"order":"A-17","status":"shipped","arrives":"tomorrow"\}/);
        assert.equal(llm.requests.at(-1).model, 'llama3.2');
        assert.equal(llm.requests.at(-1).messages.at(-1).role, 'tool');
        // Make a phone ring: the lab's phone rang and answered an agent's task call, which left its record; Ctrl-C-like stop cleaned up.
        const lab = run.output.slice(run.output.indexOf('phone: '));
        assert.match(lab, /^phone: in a call with sip:\+12125550199@127\.0\.0\.1/m);
        const calls = JSON.parse(/^\{"success":true.*"calledNumber":"\+12125550100".*$/m.exec(lab)?.[0] ?? 'null');
        assert.equal(calls?.data.length, 1, lab);
        assert.deepEqual(calls.data[0].transport, { type: 'sip', calledNumber: '+12125550100', callingNumber: '+12125550199' });
        assert.ok(calls.data[0].taskId, 'the call is the task\'s');
        assert.match(lab, /^Stopped the lab \(pid \d+\)\.$/m);
        const labLog = readFileSync(join(dir, 'lab.log'), 'utf8');
        assert.match(labLog, /^Parley lab is up/m);
        assert.match(labLog, /^Stopped the phone and the trunk\./m);
        assert.equal(existsSync(join(dir, 'data', 'lab')), false, 'the lab removed its folder');
      });
    });
  }

  describe('a port already taken', () => {
    let database: TestDatabase;
    let dir: string;
    before(async () => {
      database = await createTestDatabase('sqlite'); // the port does not depend on the database
      dir = checkoutLookalike();
    });
    after(async () => {
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('the service block stops, naming the process on PORT, and no block after it runs against that one', { timeout: TIMEOUT_MS + 10_000 }, async () => {
      const holder = createServer((socket) => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n')); // answers /readyz as if it were a service
      await new Promise<void>((listening) => holder.listen(0, '127.0.0.1', listening));
      try {
        const { port } = holder.address() as AddressInfo;
        const script = ['set -euo pipefail', ...shellBlocks(markdown), 'echo "[test] ran past the service block"'].join('\n');
        const run = await runBash(script, dir, { PATH: process.env.PATH ?? '', HOME: dir, PORT: String(port), TOOL_PORT: String(await freePort()), DATABASE_URL: database.url });
        assert.notEqual(run.code, 0, run.output);
        assert.match(run.output, new RegExp(`parley: PORT: port ${port} is taken by pid ${process.pid} \\(`));
        assert.match(run.output, /parley serve stopped: its log above says why/);
        assert.doesNotMatch(run.output, /^vendor |ran past the service block/m);
      } finally {
        await new Promise((closed) => holder.close(closed));
      }
    });

    it('the tool server\'s block stops when its port is taken (its error says "already", not "tool server ready")', { timeout: TIMEOUT_MS + 10_000 }, async () => {
      const holder = createServer();
      await new Promise<void>((listening) => holder.listen(0, '127.0.0.1', listening));
      try {
        const { port } = holder.address() as AddressInfo;
        const script = ['set -euo pipefail', ...shellBlocks(markdown), 'echo "[test] ran past the tool server block"'].join('\n');
        const run = await runBash(script, dir, { PATH: process.env.PATH ?? '', HOME: dir, PORT: String(await freePort()), TOOL_PORT: String(port), DATABASE_URL: database.url });
        assert.notEqual(run.code, 0, run.output);
        assert.match(run.output, /EADDRINUSE/);
        assert.match(run.output, /the tool server stopped \(above: why; TOOL_PORT=4001 picks another port\)/);
        assert.doesNotMatch(run.output, /^assistant |ran past the tool server block/m);
      } finally {
        await new Promise((closed) => holder.close(closed));
      }
    });
  });
});
