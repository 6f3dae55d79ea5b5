import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { closeIdleConnections } from '../../src/http/connections.ts';
import { until } from '../helpers/until.ts';

const IDLE_MS = 60_000;

describe('idle connections', () => {
  const clock = new ManualClock('2026-11-24T00:00:00Z');
  let server: Server;
  let idle: ReturnType<typeof closeIdleConnections>;
  const accepted: Socket[] = [];

  before(async () => {
    server = createServer((request, response) => {
      if (request.url === '/big') response.end(Buffer.alloc(32 * 1024 * 1024, 1));
      else response.end('ok');
    });
    server.on('connection', (socket: Socket) => accepted.push(socket));
    // A stand-in for the WebSocket plugin: answers the upgrade and keeps the socket.
    server.on('upgrade', (_request, socket: Socket) => socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n'));
    idle = closeIdleConnections(server, clock, IDLE_MS);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });
  after(async () => {
    idle.stop();
    for (const socket of accepted) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  /** A client connection, once the server has it. */
  const open = async () => {
    const known = accepted.length;
    const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
    await until('the server to accept', () => accepted.length, (n) => n > known);
    return { client, server: accepted[accepted.length - 1] as Socket, closed: once(client, 'close') };
  };
  const passes = (ms: number) => {
    clock.advance(ms);
    idle.sweep();
  };

  it('closes a connection without a byte either way for a minute, and one that sends a byte lives on', async () => {
    const quiet = await open();
    const talking = await open();
    passes(IDLE_MS - 1_000);
    assert.equal(quiet.server.destroyed, false, 'closed before its minute');
    talking.client.write('GET / HTTP/1.1\r\n');
    await until('the bytes to arrive', () => talking.server.bytesRead, (n) => n > 0);
    passes(2_000);
    await quiet.closed;
    assert.equal(talking.server.destroyed, false);
    passes(IDLE_MS - 1_000);
    assert.equal(talking.server.destroyed, false, 'its byte did not count');
    passes(2_000);
    await talking.closed;
  });

  it('closes a connection whose client stops reading an answer', async () => {
    const stalled = await open();
    stalled.client.pause();
    stalled.client.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n');
    // The kernel's buffers fill, then the count stands still: what Node still holds counts as written.
    let last = -1;
    await until('the answer to stall', () => {
      const previous = last;
      last = stalled.server.bytesWritten;
      return last > 0 && last === previous;
    }, (still) => still, 20_000, 200);
    idle.sweep();
    passes(IDLE_MS - 1_000);
    assert.equal(stalled.server.destroyed, false, 'closed before its minute');
    passes(1_000);
    // The paused client would learn of it only by reading: the server's side tells.
    assert.equal(stalled.server.destroyed, true);
    stalled.client.on('error', () => {}).destroy();
  });

  it('leaves a connection that upgraded (a WebSocket) alone', async () => {
    const socket = await open();
    socket.client.write('GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
    await once(socket.client, 'data');
    passes(IDLE_MS);
    passes(IDLE_MS);
    assert.equal(socket.server.destroyed, false);
    socket.client.destroy();
    await socket.closed;
  });
});
