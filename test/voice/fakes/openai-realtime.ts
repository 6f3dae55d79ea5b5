/**
 * A fake OpenAI Realtime WebSocket (`/v1/realtime?model=…`, GA protocol) on 127.0.0.1 that
 * plays a scripted conversation. It checks the bearer key, the model, the exact session config
 * of the first `session.update` and the shape of every client event. Its turn detection is a
 * real (energy) VAD over the appended 24 kHz audio: speech starts the turn, `silenceMs` of quiet
 * ends it. Then it transcribes (the scripted transcript), optionally calls a function and waits
 * for its `function_call_output` and `response.create`, and answers with espeak-ng speech as
 * `response.output_audio.delta` events. Talking over an answer cancels it, as server VAD with
 * `interrupt_response` does.
 */
import { isDeepStrictEqual } from 'node:util';
import type { WebSocket } from 'ws';
import { concatPcm, pcmBytes, pcmFromBase64, rms, speak } from './audio.ts';
import { delay, messageText, sameKeys, startFakeServer, Violations } from './server.ts';

export interface RealtimeTurn {
  /** What the caller is taken to have said. */
  transcript: string;
  toolCall?: { name: string; arguments: string };
  reply: string;
}

export interface RealtimeExpectations {
  apiKey: string;
  model: string;
  /** Exactly the `session` object the client must send first. */
  session: Record<string, unknown>;
}

export interface SentResponse {
  responseId: string;
  itemId: string;
  text: string;
  pcm: Int16Array;
  status: 'in_progress' | 'completed' | 'cancelled';
}

export interface OpenAiRealtimeFake {
  /** The OpenAI-style base URL (`http://127.0.0.1:port/v1`) a client derives `ws://…/v1/realtime` from. */
  url: string;
  violations: Violations;
  handshakes: { path: string; query: Record<string, string>; headers: Record<string, string | string[] | undefined> }[];
  /** Every client event, in order. */
  events: Record<string, unknown>[];
  /** All caller audio appended so far (24 kHz). */
  appended(): Int16Array;
  toolOutputs: { callId: string; output: string }[];
  truncations: { itemId: string; audioEndMs: number }[];
  cancels: number;
  sent: SentResponse[];
  setTurns(turns: RealtimeTurn[]): void;
  /** Quiet needed to end a caller's turn. */
  silenceMs: number;
  chunkIntervalMs: number;
  close(): Promise<void>;
}

const FRAME = 480; // 20 ms at 24 kHz
const SPEECH_RMS = 300;
const CLIENT_EVENTS: Record<string, { allowed: string[]; required: string[] }> = {
  'session.update': { allowed: ['type', 'session', 'event_id'], required: ['type', 'session'] },
  'input_audio_buffer.append': { allowed: ['type', 'audio', 'event_id'], required: ['type', 'audio'] },
  'conversation.item.create': { allowed: ['type', 'item', 'previous_item_id', 'event_id'], required: ['type', 'item'] },
  'response.create': { allowed: ['type', 'response', 'event_id'], required: ['type'] },
  'response.cancel': { allowed: ['type', 'response_id', 'event_id'], required: ['type'] },
  'conversation.item.truncate': { allowed: ['type', 'item_id', 'content_index', 'audio_end_ms', 'event_id'], required: ['type', 'item_id', 'content_index', 'audio_end_ms'] },
};

export async function startOpenAiRealtimeFake(expect: RealtimeExpectations): Promise<OpenAiRealtimeFake> {
  const violations = new Violations();
  const appended: Int16Array[] = [];
  let turns: RealtimeTurn[] = [];
  let ids = 0;
  const id = (prefix: string) => `${prefix}_${++ids}`;

  const fake: Omit<OpenAiRealtimeFake, 'url' | 'close'> = {
    violations, handshakes: [], events: [], toolOutputs: [], truncations: [], cancels: 0, sent: [],
    appended: () => concatPcm(appended),
    setTurns: (next) => (turns = [...next]),
    silenceMs: 400,
    chunkIntervalMs: 5,
  };

  const server = await startFakeServer({
    upgrade(req) {
      const url = new URL(req.url ?? '/', 'http://fake');
      fake.handshakes.push({ path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers });
      if (req.headers.authorization !== `Bearer ${expect.apiKey}`) return 401;
      if (url.pathname !== '/v1/realtime') violations.add(`path ${url.pathname}`);
      if (url.searchParams.get('model') !== expect.model) violations.add(`model ${url.searchParams.get('model')}`);
      return null;
    },
    connection: (socket) => converse(socket),
  });

  function converse(socket: WebSocket) {
    const send = (event: Record<string, unknown>) => {
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify({ event_id: id('event'), ...event }));
    };
    let configured = false;
    let samples = 0; // caller audio received, for audio_start_ms / audio_end_ms
    let speech: { itemId: string; startMs: number; quietSamples: number } | null = null;
    let active: SentResponse | null = null;
    let waitingForTool: { callId: string; outputSeen: boolean; turn: RealtimeTurn } | null = null;

    const violate = (message: string) => {
      violations.add(message);
      send({ type: 'error', error: { type: 'invalid_request_error', code: 'fake_violation', message, param: null, event_id: null } });
    };

    async function respond(text: string) {
      const response: SentResponse = { responseId: id('resp'), itemId: id('item'), text, pcm: new Int16Array(0), status: 'in_progress' };
      active = response;
      fake.sent.push(response);
      send({ type: 'response.created', response: { id: response.responseId, object: 'realtime.response', status: 'in_progress', output: [] } });
      send({ type: 'response.output_item.added', response_id: response.responseId, output_index: 0, item: { id: response.itemId, type: 'message', role: 'assistant', status: 'in_progress', content: [] } });
      const pcm = await speak(text, 24000);
      const parts: Int16Array[] = [];
      for (let offset = 0; offset < pcm.length; offset += 2400) {
        if (response.status !== 'in_progress' || socket.readyState !== socket.OPEN) break;
        const chunk = pcm.subarray(offset, offset + 2400);
        send({ type: 'response.output_audio.delta', response_id: response.responseId, item_id: response.itemId, output_index: 0, content_index: 0, delta: pcmBytes(chunk).toString('base64') });
        parts.push(chunk);
        response.pcm = concatPcm(parts);
        await delay(fake.chunkIntervalMs);
      }
      if (response.status === 'in_progress') {
        response.status = 'completed';
        send({ type: 'response.output_audio_transcript.delta', response_id: response.responseId, item_id: response.itemId, output_index: 0, content_index: 0, delta: text });
        send({ type: 'response.output_audio.done', response_id: response.responseId, item_id: response.itemId, output_index: 0, content_index: 0 });
        send({ type: 'response.output_audio_transcript.done', response_id: response.responseId, item_id: response.itemId, output_index: 0, content_index: 0, transcript: text });
      }
      send({ type: 'response.done', response: { id: response.responseId, object: 'realtime.response', status: response.status, output: [] } });
      if (active === response) active = null;
    }

    function cancelActive() {
      if (active && active.status === 'in_progress') active.status = 'cancelled';
    }

    function endOfTurn(itemId: string) {
      const turn = turns.shift() ?? { transcript: '(unscripted)', reply: 'I did not expect that.' };
      send({ type: 'input_audio_buffer.committed', previous_item_id: null, item_id: itemId });
      send({ type: 'conversation.item.input_audio_transcription.completed', item_id: itemId, content_index: 0, transcript: turn.transcript });
      if (!turn.toolCall) return void respond(turn.reply);
      const responseId = id('resp');
      const callId = id('call');
      const callItem = id('item');
      send({ type: 'response.created', response: { id: responseId, object: 'realtime.response', status: 'in_progress', output: [] } });
      send({ type: 'response.function_call_arguments.done', response_id: responseId, item_id: callItem, output_index: 0, call_id: callId, name: turn.toolCall.name, arguments: turn.toolCall.arguments });
      send({ type: 'response.done', response: { id: responseId, object: 'realtime.response', status: 'completed', output: [{ id: callItem, type: 'function_call', call_id: callId, name: turn.toolCall.name, arguments: turn.toolCall.arguments }] } });
      waitingForTool = { callId, outputSeen: false, turn };
    }

    function hear(pcm: Int16Array) {
      appended.push(pcm);
      for (let offset = 0; offset + FRAME <= pcm.length; offset += FRAME) {
        const loud = rms(pcm.subarray(offset, offset + FRAME)) > SPEECH_RMS;
        const atMs = Math.round(((samples + offset) / 24000) * 1000);
        if (loud && !speech) {
          speech = { itemId: id('item'), startMs: atMs, quietSamples: 0 };
          cancelActive(); // interrupt_response: talking over the assistant stops it
          send({ type: 'input_audio_buffer.speech_started', audio_start_ms: atMs, item_id: speech.itemId });
        } else if (speech) {
          speech.quietSamples = loud ? 0 : speech.quietSamples + FRAME;
          if ((speech.quietSamples / 24000) * 1000 >= fake.silenceMs) {
            const itemId = speech.itemId;
            speech = null;
            send({ type: 'input_audio_buffer.speech_stopped', audio_end_ms: atMs, item_id: itemId });
            endOfTurn(itemId);
          }
        }
      }
      samples += pcm.length;
    }

    socket.on('message', (data) => {
      let event: Record<string, unknown>;
      try {
        event = JSON.parse(messageText(data)) as Record<string, unknown>;
      } catch {
        return violate('a message that is not JSON');
      }
      fake.events.push(event);
      const type = String(event.type);
      const shape = CLIENT_EVENTS[type];
      if (!shape) return violate(`unknown client event ${type}`);
      const wrong = sameKeys(event, shape.allowed, shape.required);
      if (wrong) return violate(`${type}: ${wrong}`);
      if (!configured && type !== 'session.update') return violate(`${type} before session.update`);
      switch (type) {
        case 'session.update':
          if (!configured && !isDeepStrictEqual(event.session, expect.session)) {
            return violate(`session ${JSON.stringify(event.session)}\nexpected ${JSON.stringify(expect.session)}`);
          }
          configured = true;
          return send({ type: 'session.updated', session: { object: 'realtime.session', id: 'sess_fake', ...(event.session as object) } });
        case 'input_audio_buffer.append':
          return hear(pcmFromBase64(String(event.audio)));
        case 'conversation.item.create': {
          const item = event.item as Record<string, unknown>;
          const itemWrong = sameKeys(item, ['type', 'call_id', 'output', 'id'], ['type', 'call_id', 'output']);
          if (item.type !== 'function_call_output' || itemWrong) return violate(`conversation.item.create: ${itemWrong ?? String(item.type)}`);
          if (!waitingForTool || item.call_id !== waitingForTool.callId) return violate(`function_call_output for unknown call ${String(item.call_id)}`);
          fake.toolOutputs.push({ callId: String(item.call_id), output: String(item.output) });
          waitingForTool.outputSeen = true;
          return send({ type: 'conversation.item.added', previous_item_id: null, item: { id: id('item'), type: 'function_call_output', call_id: item.call_id, output: item.output } });
        }
        case 'response.create': {
          if (waitingForTool && !waitingForTool.outputSeen) return violate('response.create before the function_call_output');
          const reply = waitingForTool?.turn.reply ?? 'Yes?';
          waitingForTool = null;
          return void respond(reply);
        }
        case 'response.cancel':
          fake.cancels++;
          if (!active) return send({ type: 'error', error: { type: 'invalid_request_error', code: 'response_cancel_not_active', message: 'Cancellation failed: no active response found', param: null, event_id: null } });
          return cancelActive();
        case 'conversation.item.truncate': {
          if (event.content_index !== 0 || typeof event.audio_end_ms !== 'number') return violate('conversation.item.truncate fields');
          const sent = fake.sent.find((response) => response.itemId === event.item_id);
          if (!sent) return violate(`truncate of unknown item ${String(event.item_id)}`);
          if (event.audio_end_ms > (sent.pcm.length / 24000) * 1000 + 1) return violate('audio_end_ms beyond the audio sent');
          fake.truncations.push({ itemId: String(event.item_id), audioEndMs: event.audio_end_ms });
          return send({ type: 'conversation.item.truncated', item_id: event.item_id, content_index: 0, audio_end_ms: event.audio_end_ms });
        }
      }
    });
  }

  return Object.assign(fake, { url: `http://127.0.0.1:${server.port}/v1`, close: () => server.close() });
}
