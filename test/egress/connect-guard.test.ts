import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import WebSocket, { WebSocketServer } from 'ws';
import { EgressError, type EgressLookup } from '../../src/egress/client.ts';
import { guardConnection } from '../../src/egress/connect-guard.ts';
import { parseAllowList } from '../../src/egress/policy.ts';

const NONE = parseAllowList('');
const LOOPBACK = parseAllowList('127.0.0.1');
/** A resolver for names that only exist in this test; every answer is a loopback or a public address never dialled. */
const resolver = (answers: Record<string, string[]>): EgressLookup => async (hostname) => {
  const addresses = answers[hostname];
  if (!addresses) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};
const names = resolver({ 'stt.provider.test': ['127.0.0.1'], 'mixed.provider.test': ['93.184.216.34', '127.0.0.1'] });

/** Opens a WebSocket through the guard: 'open', or the error that stopped it. */
async function openSocket(url: string, lookup: ReturnType<typeof guardConnection>['lookup']): Promise<'open' | Error> {
  const ws = new WebSocket(url, { lookup });
  const outcome = await new Promise<'open' | Error>((resolve) => {
    ws.once('open', () => resolve('open'));
    ws.once('error', resolve);
  });
  // Closing a socket that never opened reports one more error; it says nothing new.
  ws.on('error', () => {});
  ws.terminate();
  return outcome;
}

describe('guardConnection: the egress policy for provider connections the voice code opens itself', () => {
  let http: Server;
  let wss: WebSocketServer;
  let port: number;
  const seen: IncomingMessage[] = [];

  before(async () => {
    http = createServer((req, res) => {
      seen.push(req);
      res.end('ok');
    });
    wss = new WebSocketServer({ server: http });
    wss.on('connection', (_ws, req) => seen.push(req));
    http.listen(0, '127.0.0.1');
    await once(http, 'listening');
    port = (http.address() as AddressInfo).port;
  });
  after(async () => {
    wss.close();
    http.closeAllConnections();
    http.close();
    await once(http, 'close');
  });

  it('refuses a literal loopback address before any connection, unless PARLEY_EGRESS_ALLOW names it', async () => {
    const before = seen.length;
    for (const url of [`ws://127.0.0.1:${port}`, `http://[::1]:${port}/v1`, 'wss://169.254.169.254', `ws://0x7f.1:${port}`]) {
      assert.throws(() => guardConnection(url, NONE, names), (err: unknown) => err instanceof EgressError && err.kind === 'refused_address', url);
    }
    const { lookup } = guardConnection(`ws://127.0.0.1:${port}`, LOOPBACK, names);
    assert.equal(await openSocket(`ws://127.0.0.1:${port}`, lookup), 'open');
    assert.equal(seen.length, before + 1);
  });

  it('judges a name on the address the connection resolves, and dials only a judged one', async () => {
    const before = seen.length;
    const url = `ws://stt.provider.test:${port}/v1/listen`;
    const refused = await openSocket(url, guardConnection(url, NONE, names).lookup);
    assert.ok(refused instanceof EgressError, String(refused));
    assert.equal(refused.kind, 'refused_address');
    assert.equal(refused.message, 'egress to stt.provider.test refused by the egress policy', 'what the name resolves to is not the tenant\'s to learn');
    assert.equal(refused.code, 'loopback', 'the log still knows why');
    assert.equal(seen.length, before, 'nothing reached the server');

    assert.equal(await openSocket(url, guardConnection(url, LOOPBACK, names).lookup), 'open');
    assert.equal(seen.length, before + 1);
    assert.equal(seen.at(-1)?.headers.host, `stt.provider.test:${port}`, 'the Host header still names the provider');
  });

  it('refuses a name when any of its addresses is refused, whatever order the resolver gives', async () => {
    const before = seen.length;
    const url = `ws://mixed.provider.test:${port}`;
    const refused = await openSocket(url, guardConnection(url, NONE, names).lookup);
    assert.ok(refused instanceof EgressError && refused.kind === 'refused_address', String(refused));
    assert.equal(seen.length, before);
  });

  it('works as the lookup of an undici Agent (streaming HTTP providers)', async () => {
    const url = `http://stt.provider.test:${port}/v1/audio/transcriptions`;
    const refusedAgent = new Agent({ connect: { lookup: guardConnection(url, NONE, names).lookup } });
    await assert.rejects(request(url, { dispatcher: refusedAgent }), (err: unknown) => err instanceof EgressError && err.kind === 'refused_address');
    await refusedAgent.close();
    const agent = new Agent({ connect: { lookup: guardConnection(url, LOOPBACK, names).lookup } });
    const res = await request(url, { dispatcher: agent });
    assert.deepEqual([res.statusCode, await res.body.text()], [200, 'ok']);
    await agent.close();
  });

  it('takes only http(s) and ws(s) URLs without credentials', () => {
    for (const url of ['ftp://stt.provider.test', 'https://user:pass@stt.provider.test', 'not a url']) {
      assert.throws(() => guardConnection(url, LOOPBACK, names), (err: unknown) => err instanceof EgressError && err.kind === 'invalid_url', url);
    }
  });
});
