import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createApiToken, createTenant, type TestApp } from '../helpers/app.ts';
import { startKamailio, type Kamailio } from '../helpers/kamailio.ts';

const run = promisify(execFile);
const PAGE = 'docs/sdk.md';

/** The page's ```ts blocks, in order: together they are one script. */
export function typescriptBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```ts\n([\s\S]*?)\n```/g)].map((m) => m[1] as string);
}

/** A folder with the script, a strict tsconfig and the repository's node_modules (for @parley/sdk). */
async function scriptFolder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'parley-sdk-doc-'));
  await symlink(resolve('node_modules'), join(dir, 'node_modules'));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  await writeFile(join(dir, 'scenario.ts'), typescriptBlocks(await readFile(PAGE, 'utf8')).join('\n\n'));
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, types: ['node'], outDir: 'out' },
    files: ['scenario.ts'],
  }));
  return dir;
}

/** A tool server on loopback that records what it is sent and answers like the page's lookup_order. */
async function toolServer(): Promise<{ url: string; requests: { headers: Record<string, unknown>; body: any }[]; close(): Promise<void> }> {
  const requests: { headers: Record<string, unknown>; body: any }[] = [];
  const server: Server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString()));
    request.on('end', () => {
      requests.push({ headers: request.headers, body: JSON.parse(text) });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"shipped"}');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`,
    requests,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

describe(`${PAGE} runs as written`, () => {
  let dir: string;
  let kamailio: Kamailio;
  before(async () => {
    dir = await scriptFolder();
    kamailio = await startKamailio();
  });
  after(async () => {
    await kamailio?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('type-checks under tsc --strict (and compiles)', async () => {
    const tsc = resolve('node_modules/typescript/bin/tsc');
    const out = await run(process.execPath, [tsc, '-p', dir], { timeout: 120_000 }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? 'tsc failed' }));
    assert.equal(out.stdout.trim(), '', out.stdout);
  });

  for (const dialect of DIALECTS) {
    describe(`against the service (${dialect})`, () => {
      let t: TestApp;
      let tool: Awaited<ReturnType<typeof toolServer>>;
      let env: Record<string, string>;
      before(async () => {
        tool = await toolServer();
        t = await buildTestApp(dialect, { PARLEY_EGRESS_ALLOW: '127.0.0.0/8' });
        const tenant = await createTenant(t);
        await t.app.listen({ port: 0, host: '127.0.0.1' });
        env = {
          PATH: process.env.PATH ?? '',
          PARLEY_URL: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`,
          PARLEY_TOKEN: await createApiToken(t, tenant.vendorId, { role: 'editor', organizationId: tenant.organizationId }),
          PARLEY_VENDOR: tenant.vendorId,
          PARLEY_ORGANIZATION: tenant.organizationId,
          TOOL_URL: tool.url,
          SIP_HOST: kamailio.host,
          SIP_PORT: String(kamailio.udpPort),
          SIP_USERNAME: kamailio.username,
          SIP_PASSWORD: kamailio.password,
        };
      });
      after(async () => {
        await t?.close();
        await tool?.close();
      });

      it('does what it says, line by line', async () => {
        const { stdout } = await run(process.execPath, [join(dir, 'out', 'scenario.js')], { cwd: dir, env, timeout: 60_000 });
        const lines = stdout.trim().split('\n');
        const expected = [
          /^strategy: Warm English voice \([0-9a-f-]{36}\)$/,
          /^assistant: Front desk, extensions tool_webhook, transfer_call$/,
          /^tool lookup_order, header Authorization reads \*{8}$/,
          /^the tool answered 200 \(ok\) in \d+ ms$/,
          /^after the update: tool_webhook, end_call; tool kept its id: true$/,
          /^1 assistant\(s\) whose name starts with "Front"$/,
          /^- Front desk$/,
          /^task created: PENDING$/,
          /^task executed: SCHEDULED$/,
          /^urgent task: SCHEDULED$/,
          /^SIP registration accepted: 200 OK$/,
          /^refused: 400 VALIDATION_FAILED at parameters.temperature \(trace \S+\)$/,
        ];
        assert.equal(lines.length, expected.length, stdout);
        expected.forEach((pattern, i) => assert.match(lines[i] ?? '', pattern));

        // The tool got the webhook of the interface, with its header as stored (not the mask).
        assert.equal(tool.requests.length, 1);
        assert.equal(tool.requests[0]?.headers.authorization, 'Bearer my-webhook-token');
        assert.deepEqual(tool.requests[0]?.body.parameters, { orderNumber: 'A-17' });
        // The update kept the header and changed the timeout of the same item.
        const [assistant] = (await t.call('GET', `/api/v1/vendors/${env.PARLEY_VENDOR}/organizations/${env.PARLEY_ORGANIZATION}/assistants`)).json().data;
        const webhook = assistant.extensions.find((e: { type: string }) => e.type === 'tool_webhook');
        assert.equal(webhook.parameters.timeoutSeconds, 5);
        assert.equal(webhook.parameters.headers.Authorization, '********');
      });
    });
  }
});
