/**
 * Issue 10, items 3 (WebSocket) and 5: what one tenant can make a call cost. Concurrent calls
 * per organization, turns, transcript size and the history sent to the LLM are capped; a call
 * client that never reads, or keeps sending garbage, is cut off.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket } from 'ws';
import { MAX_BAD_FRAMES, MAX_BUFFERED_BYTES } from '../../src/calls/transports/websocket.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { callRecord, startWorld, type World } from '../calls/support/world.ts';
import { waitFor } from './support.ts';

const CAP = 3;
const TURNS = 4;
const TRANSCRIPT_KB = 4;
const HISTORY = 6;
/**
 * What a client that stopped reading may still receive once it reads again: what the server
 * held (MAX_BUFFERED_BYTES) plus what the kernel buffers of a loopback connection hold (a few
 * MiB with Linux's default tcp_wmem). Without the cut-off it receives the whole 16 MB answer.
 */
const STALLED_RECEIVE_LIMIT = MAX_BUFFERED_BYTES + 8 * 1024 * 1024;

/** A raw call socket that can stop reading, and counts what it received. */
function rawCall(url: string): Promise<{ ws: WebSocket; bytes: () => number; frames: string[]; closed: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    let bytes = 0;
    const frames: string[] = [];
    const closed = new Promise<number>((done) => ws.on('close', (code) => done(code)));
    ws.on('message', (data: Buffer) => {
      bytes += data.length;
      frames.push(data.toString('utf8'));
    });
    ws.on('error', () => {});
    ws.once('open', () => resolve({ ws, bytes: () => bytes, frames, closed }));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
}

for (const dialect of DIALECTS) {
  describe(`call abuse (${dialect})`, () => {
    let w: World;
    let assistantId: string;
    before(async () => {
      w = await startWorld(dialect, {
        PARLEY_MAX_CALLS_PER_ORGANIZATION: String(CAP), PARLEY_CALL_MAX_TURNS: String(TURNS),
        PARLEY_CALL_MAX_TRANSCRIPT_KB: String(TRANSCRIPT_KB), PARLEY_LLM_HISTORY_MESSAGES: String(HISTORY),
      });
      assistantId = await w.createAssistant({ name: 'Abused', systemPrompt: 'Be brief.' });
    });
    after(() => w.close());

    const endCall = async (call: { websocketUrl: string }) => {
      const socket = await rawCall(call.websocketUrl);
      socket.ws.send(JSON.stringify({ type: 'end' }));
      await socket.closed;
    };

    it(`5: at most ${CAP} calls of one organization ring or run at once, even when started together`, async () => {
      const starts = await Promise.all(Array.from({ length: 12 }, () => w.api('POST', `${w.tenant.orgPath}/assistants/${assistantId}/calls`, {})));
      const started = starts.filter((r) => r.status === 201);
      assert.equal(started.length, CAP);
      for (const refused of starts.filter((r) => r.status !== 201)) {
        assert.equal(refused.status, 409);
        assert.match(refused.body.message, /PARLEY_MAX_CALLS_PER_ORGANIZATION/);
      }
      const [first, ...rest] = started.map((r) => r.body.data);
      await endCall(first);
      const next = await w.api('POST', `${w.tenant.orgPath}/assistants/${assistantId}/calls`, {});
      assert.equal(next.status, 201, 'a slot freed by an ended call is taken');
      for (const call of [...rest, next.body.data]) await endCall(call);
    });

    it(`5: a call ends (limit_reached) after ${TURNS} turns; the LLM never gets more than ${HISTORY} messages of history`, async () => {
      const { id, client } = await w.open(assistantId);
      const before = w.llm.requests.length;
      for (let i = 0; i < TURNS; i++) {
        client.send({ type: 'user_message', text: `turn ${i}` });
        await client.next('assistant_message');
      }
      client.send({ type: 'user_message', text: 'one more' });
      assert.match((await client.next('error')).message, new RegExp(`limit of ${TURNS} turns`));
      assert.equal((await client.next('call_ended')).reason, 'limit_reached');
      const sent = w.llm.requests.slice(before);
      assert.equal(sent.length, TURNS);
      for (const request of sent) assert.ok(request.messages.length <= HISTORY + 1, `${request.messages.length} messages sent`);
      assert.equal(sent.at(-1).messages[0].role, 'system', 'the system prompt is always sent');
      const record = await callRecord(w, id);
      assert.equal(record.endReason, 'limit_reached');
      assert.equal(record.transcript.filter((e: { role: string }) => e.role === 'user').length, TURNS);
    });

    it(`5: a call ends (limit_reached) once its transcript would pass ${TRANSCRIPT_KB} KiB`, async () => {
      const { id, client } = await w.open(assistantId);
      const text = 'x'.repeat(1500);
      let ended = false;
      for (let i = 0; i < 5 && !ended; i++) {
        client.send({ type: 'user_message', text });
        const frame = await client.next((f) => f.type === 'assistant_message' || f.type === 'call_ended');
        ended = frame.type === 'call_ended';
      }
      assert.ok(ended, 'the call ended');
      const record = await callRecord(w, id);
      assert.equal(record.endReason, 'limit_reached');
      const size = record.transcript.reduce((sum: number, e: { text: string }) => sum + Buffer.byteLength(e.text), 0);
      assert.ok(size <= TRANSCRIPT_KB * 1024, `${size} bytes of transcript`);
    });

    it(`3: a client that keeps sending bad frames is closed (1008) after ${MAX_BAD_FRAMES}, even while it reads nothing`, async () => {
      const call = (await w.api('POST', `${w.tenant.orgPath}/assistants/${assistantId}/calls`, {})).body.data;
      const socket = await rawCall(call.websocketUrl);
      socket.ws.pause();
      for (let i = 0; i < 2_000; i++) socket.ws.send(i % 2 ? '{not json' : JSON.stringify({ type: 'no_such_frame' }));
      socket.ws.resume();
      assert.equal(await socket.closed, 1008);
      const errors = socket.frames.filter((f) => JSON.parse(f).type === 'error');
      assert.equal(errors.length, MAX_BAD_FRAMES, 'answered up to the limit, then closed');
      await waitFor('the call to be recorded as ended', async () => (await callRecord(w, call.id)).status === 'ended');
    });

    it('3: a client that stops reading while a 16 MB answer streams is cut off once 1 MiB waits for it', async () => {
      const word = 'w'.repeat(999);
      w.llm.respond = () => ({ text: Array.from({ length: 8_000 }, () => word).join(' ') });
      try {
        const call = (await w.api('POST', `${w.tenant.orgPath}/assistants/${assistantId}/calls`, {})).body.data;
        const socket = await rawCall(call.websocketUrl);
        await waitFor('call_started', () => socket.frames.length > 0);
        socket.ws.pause();
        socket.ws.send(JSON.stringify({ type: 'user_message', text: 'Tell me everything' }));
        await waitFor('the call to end', async () => (await callRecord(w, call.id)).status === 'ended');
        socket.ws.resume();
        const code = await socket.closed;
        assert.equal(code, 1006, 'cut off, without a closing handshake');
        assert.ok(socket.bytes() < STALLED_RECEIVE_LIMIT, `received ${(socket.bytes() / 1024 / 1024).toFixed(1)} MiB`);
        assert.equal((await callRecord(w, call.id)).endReason, 'client_disconnected');
      } finally {
        w.llm.respond = () => ({ text: 'Hello there.' });
      }
    });
  });
}
