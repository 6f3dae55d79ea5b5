import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { CLOSING_MARK, twilioMediaStreamTransport, type TwilioStreamHandlers } from '../../src/calls/transports/twilio.ts';
import type { CallTransport } from '../../src/calls/transports/transport.ts';
import type { AudioLink } from '../../src/calls/voice/link.ts';
import { connectTwilioStream, type TwilioStreamClient } from './support/twilio-client.ts';

const IDS = { accountSid: 'AC1', callSid: 'CA1', streamSid: 'MZ1' };

interface ServerSide {
  transport: CallTransport;
  link: AudioLink;
  events: string[];
  audio: Buffer[];
  started: Promise<void>;
}

/** The transport on a real WebSocket server on loopback; each connection hands its side to the test. */
describe('Twilio Media Streams transport', () => {
  let server: WebSocketServer;
  let url: string;
  const sides: ((side: ServerSide) => void)[] = [];
  before(async () => {
    server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((resolve) => server.once('listening', resolve));
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
    server.on('connection', (socket) => {
      const events: string[] = [];
      const audio: Buffer[] = [];
      let onStart = () => {};
      const started = new Promise<void>((resolve) => (onStart = resolve));
      const handlers: TwilioStreamHandlers = {
        started: (start) => { events.push(`start ${start.callSid}`); onStart(); },
        dtmf: (digit) => void events.push(`dtmf ${digit}`),
        stopped: () => void events.push('stop'),
        closed: () => void events.push('closed'),
        refused: (reason) => void events.push(`refused ${reason}`),
      };
      const { transport, link } = twilioMediaStreamTransport(socket, { type: 'websocket' }, handlers);
      link.onAudio((chunk) => audio.push(chunk));
      sides.shift()?.({ transport, link, events, audio, started });
    });
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function open(): Promise<{ client: TwilioStreamClient; side: ServerSide }> {
    const side = new Promise<ServerSide>((resolve) => sides.push(resolve));
    const client = await connectTwilioStream(url, IDS);
    const s = await side;
    client.start();
    await s.started;
    return { client, side: s };
  }
  const frame = (n: number) => Buffer.alloc(160, n);

  it('reads start, inbound media and dtmf; ignores outbound media, marks and malformed messages', { timeout: 10_000 }, async () => {
    const { client, side } = await open();
    client.sendRaw('not json');
    client.sendRaw(JSON.stringify({ event: 'media', streamSid: 'MZ1', media: { track: 'outbound', payload: frame(1).toString('base64') } }));
    client.mark('theirs');
    client.dtmf('5');
    await client.talk(Buffer.concat([frame(7), frame(8)]));
    client.stop();
    while (!side.events.includes('stop')) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(Buffer.concat(side.audio), Buffer.concat([frame(7), frame(8)]));
    assert.deepEqual(side.events.slice(0, 3), ['start CA1', 'dtmf 5', 'stop']);
    side.transport.close();
    assert.equal((await client.closed).code, 1000);
  });

  it('closes only once Twilio has played the buffered audio and echoed the closing mark', { timeout: 10_000 }, async () => {
    const { client, side } = await open();
    for (let i = 0; i < 10; i++) side.link.sendFrame(frame(i));
    side.transport.close();
    const mark = await client.next('mark');
    assert.equal(mark.mark.name, CLOSING_MARK);
    assert.equal((await client.closed).code, 1000);
    assert.equal(client.playedBytes(), 1600, 'every byte was played before the socket closed');
    assert.deepEqual(client.violations, []);
  });

  it('barge-in sends clear; with nothing left to play, close is immediate', { timeout: 10_000 }, async () => {
    const { client, side } = await open();
    for (let i = 0; i < 25; i++) side.link.sendFrame(frame(i));
    side.link.flushPeer();
    const clear = await client.next('clear');
    assert.equal(clear.streamSid, 'MZ1');
    side.transport.close();
    assert.equal((await client.closed).code, 1000);
    assert.ok(!client.received.some((r) => r.message.event === 'mark'), 'no mark after a clear');
    assert.ok(client.playedBytes() < 25 * 160, 'the clear dropped the rest');
  });

  it('a peer that never echoes the mark is closed after the drain timeout', { timeout: 10_000 }, async () => {
    const side = new Promise<ServerSide>((resolve) => sides.push(resolve));
    const raw = new WebSocket(url);
    await new Promise((resolve) => raw.once('open', resolve));
    const s = await side;
    raw.send(JSON.stringify({ event: 'start', streamSid: 'MZ2', start: { ...IDS, streamSid: 'MZ2', tracks: ['inbound'], mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } } }));
    await s.started;
    s.link.sendFrame(frame(1));
    const began = performance.now();
    s.transport.close();
    const code = await new Promise<number>((resolve) => raw.once('close', resolve));
    assert.equal(code, 1000);
    assert.ok(performance.now() - began >= 1_000, 'it waited for the echo');
  });
});
