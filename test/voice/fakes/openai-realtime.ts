/**
 * A fake OpenAI Realtime WebSocket (`/v1/realtime?model=…`, GA protocol) on 127.0.0.1 that
 * plays a scripted conversation. It checks the bearer key, the model, the exact session config
 * of the first `session.update` and the shape of every client event. Its turn detection is a
 * real (energy) VAD over the appended 24 kHz audio: speech starts the turn, `silenceMs` of quiet
 * ends it. Then it transcribes (the scripted transcript), optionally calls a function and waits
 * for its `function_call_output` and `response.create`, and answers with espeak-ng speech as
 * `response.output_audio.delta` events, its transcript streaming beside the audio word by word.
 * Talking over an answer cancels it, as server VAD with `interrupt_response` does. A
 * `response.create` with instructions (the greeting) is answered with the expected greeting,
 * after checking that the instructions quote it; its metadata comes back on the response. A
 * typed user message (a `message` item) is the next scripted turn, answered on `response.create`.
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
  /** The greeting a `response.create` with instructions must ask for word for word; it is what the fake then says. */
  greeting?: string;
}

export interface SentResponse {
  responseId: string;
  itemId: string;
  text: string;
  pcm: Int16Array;
  status: 'in_progress' | 'completed' | 'cancelled';
  metadata: Record<string, string> | null;
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
  /** Typed user messages (`message` items with one `input_text`), each taken as the next scripted turn. */
  userTexts: string[];
  truncations: { itemId: string; audioEndMs: number }[];
  cancels: number;
  sent: SentResponse[];
  setTurns(turns: RealtimeTurn[]): void;
  /** A status to refuse every handshake with (null: accept those with the right key). */
  refuseHandshakes: number | null;
  /** Closes every open session from the server side, as OpenAI does when a session ends. */
  closeConnections(code: number, reason: string): void;
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
  const sockets = new Set<WebSocket>();
  let turns: RealtimeTurn[] = [];
  let ids = 0;
  const id = (prefix: string) => `${prefix}_${++ids}`;

  const fake: Omit<OpenAiRealtimeFake, 'url' | 'close'> = {
    violations, handshakes: [], events: [], toolOutputs: [], userTexts: [], truncations: [], cancels: 0, sent: [],
    appended: () => concatPcm(appended),
    setTurns: (next) => (turns = [...next]),
    refuseHandshakes: null,
    closeConnections: (code, reason) => {
      for (const socket of sockets) socket.close(code, reason);
    },
    silenceMs: 400,
    chunkIntervalMs: 5,
  };

  const server = await startFakeServer({
    upgrade(req) {
      const url = new URL(req.url ?? '/', 'http://fake');
      fake.handshakes.push({ path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers });
      if (fake.refuseHandshakes !== null) return fake.refuseHandshakes;
      if (req.headers.authorization !== `Bearer ${expect.apiKey}`) return 401;
      if (url.pathname !== '/v1/realtime') violations.add(`path ${url.pathname}`);
      if (url.searchParams.get('model') !== expect.model) violations.add(`model ${url.searchParams.get('model')}`);
      return null;
    },
    connection: (socket) => converse(socket),
  });

  function converse(socket: WebSocket) {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const send = (event: Record<string, unknown>) => {
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify({ event_id: id('event'), ...event }));
    };
    let configured = false;
    let samples = 0; // caller audio received, for audio_start_ms / audio_end_ms
    let speech: { itemId: string; startMs: number; quietSamples: number } | null = null;
    let active: SentResponse | null = null;
    let waitingForTool: { callId: string; outputSeen: boolean; turn: RealtimeTurn } | null = null;
    let typed: RealtimeTurn | null = null;

    const violate = (message: string) => {
      violations.add(message);
      send({ type: 'error', error: { type: 'invalid_request_error', code: 'fake_violation', message, param: null, event_id: null } });
    };

    async function respond(text: string, metadata: Record<string, string> | null = null) {
      const response: SentResponse = { responseId: id('resp'), itemId: id('item'), text, pcm: new Int16Array(0), status: 'in_progress', metadata };
      active = response;
      fake.sent.push(response);
      const shell = (status: string) => ({ id: response.responseId, object: 'realtime.response', status, output: [], metadata });
      send({ type: 'response.created', response: shell('in_progress') });
      send({ type: 'response.output_item.added', response_id: response.responseId, output_index: 0, item: { id: response.itemId, type: 'message', role: 'assistant', status: 'in_progress', content: [] } });
      const pcm = await speak(text, 24000);
      const parts: Int16Array[] = [];
      const words = text.split(/(?<=\s)/);
      let wordsSent = 0;
      const chunks = Math.ceil(pcm.length / 2400);
      for (let offset = 0, chunk = 0; offset < pcm.length; offset += 2400, chunk++) {
        if (response.status !== 'in_progress' || socket.readyState !== socket.OPEN) break;
        // The transcript runs with the audio: the words up to this chunk's share of the text.
        const upTo = Math.ceil((words.length * (chunk + 1)) / chunks);
        const delta = words.slice(wordsSent, upTo).join('');
        wordsSent = Math.max(wordsSent, upTo);
        if (delta) send({ type: 'response.output_audio_transcript.delta', response_id: response.responseId, item_id: response.itemId, output_index: 0, content_index: 0, delta });
        const piece = pcm.subarray(offset, offset + 2400);
        send({ type: 'response.output_audio.delta', response_id: response.responseId, item_id: response.itemId, output_index: 0, content_index: 0, delta: pcmBytes(piece).toString('base64') });
        parts.push(piece);
        response.pcm = concatPcm(parts);
        await delay(fake.chunkIntervalMs);
      }
      if (response.status === 'in_progress') {
        response.status = 'completed';
        send({ type: 'response.output_audio.done', response_id: response.responseId, item_id: response.itemId, output_index: 0, content_index: 0 });
        send({ type: 'response.output_audio_transcript.done', response_id: response.responseId, item_id: response.itemId, output_index: 0, content_index: 0, transcript: text });
      }
      send({ type: 'response.done', response: shell(response.status) });
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

    /** A response asked for with instructions: only the greeting, said word for word, with no tools. */
    function greet(response: Record<string, unknown>) {
      const wrong = sameKeys(response, ['instructions', 'tool_choice', 'metadata'], ['instructions']);
      if (wrong) return violate(`response.create response: ${wrong}`);
      if (!expect.greeting || !String(response.instructions).includes(expect.greeting)) return violate(`response.create instructions ${JSON.stringify(response.instructions)} do not quote the greeting`);
      if (response.tool_choice !== undefined && response.tool_choice !== 'none') return violate(`greeting tool_choice ${JSON.stringify(response.tool_choice)}`);
      const metadata = (response.metadata ?? null) as Record<string, string> | null;
      if (metadata && Object.values(metadata).some((v) => typeof v !== 'string')) return violate('metadata values must be strings');
      return void respond(expect.greeting, metadata);
    }

    /** A typed caller message: a user item holding one input_text, taken as the next scripted turn; response.create answers it. */
    function userText(item: Record<string, unknown>) {
      const wrong = sameKeys(item, ['type', 'role', 'content', 'id'], ['type', 'role', 'content']);
      const content = item.content as Record<string, unknown>[] | undefined;
      const part = Array.isArray(content) && content.length === 1 ? content[0]! : null;
      if (wrong || item.role !== 'user' || !part || part.type !== 'input_text' || typeof part.text !== 'string' || sameKeys(part, ['type', 'text'], ['type', 'text'])) {
        return violate(`conversation.item.create message: ${JSON.stringify(item)}`);
      }
      fake.userTexts.push(part.text);
      typed = turns.shift() ?? { transcript: part.text, reply: 'I did not expect that.' };
      if (typed.transcript !== part.text) violate(`typed ${JSON.stringify(part.text)}, scripted ${JSON.stringify(typed.transcript)}`);
      return send({ type: 'conversation.item.added', previous_item_id: null, item: { id: id('item'), type: 'message', role: 'user', content: [part] } });
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
        case 'input_audio_buffer.append': {
          const bytes = Buffer.from(String(event.audio), 'base64').length;
          if (bytes === 0 || bytes % 2 !== 0) return violate(`input_audio_buffer.append of ${bytes} bytes: not whole PCM16 samples`);
          return hear(pcmFromBase64(String(event.audio)));
        }
        case 'conversation.item.create': {
          const item = event.item as Record<string, unknown>;
          if (item.type === 'message') return userText(item);
          const itemWrong = sameKeys(item, ['type', 'call_id', 'output', 'id'], ['type', 'call_id', 'output']);
          if (item.type !== 'function_call_output' || itemWrong) return violate(`conversation.item.create: ${itemWrong ?? String(item.type)}`);
          if (!waitingForTool || item.call_id !== waitingForTool.callId) return violate(`function_call_output for unknown call ${String(item.call_id)}`);
          fake.toolOutputs.push({ callId: String(item.call_id), output: String(item.output) });
          waitingForTool.outputSeen = true;
          return send({ type: 'conversation.item.added', previous_item_id: null, item: { id: id('item'), type: 'function_call_output', call_id: item.call_id, output: item.output } });
        }
        case 'response.create': {
          if (active) {
            return send({ type: 'error', error: { type: 'invalid_request_error', code: 'conversation_already_has_active_response', message: 'Conversation already has an active response in progress', param: null, event_id: null } });
          }
          if (event.response !== undefined) return greet(event.response as Record<string, unknown>);
          if (waitingForTool && !waitingForTool.outputSeen) return violate('response.create before the function_call_output');
          const reply = waitingForTool?.turn.reply ?? typed?.reply ?? 'Yes?';
          waitingForTool = null;
          typed = null;
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
