/**
 * A Twilio Media Streams TEST CLIENT: it plays Twilio's side of a bidirectional stream
 * (`<Connect><Stream>`), written from Twilio's published description of the WebSocket messages.
 * It sends `connected`, `start`, `media` (base64 mu-law 8 kHz, 20 ms chunks, numbered), `mark`,
 * `dtmf` and `stop`; it plays what it receives in real time like Twilio's buffer does, echoes a
 * `mark` once the audio queued before it has played (or at once when `clear` drops that audio),
 * and records as a violation anything Twilio would not accept: binary frames, unknown events,
 * another streamSid, a payload that is not base64.
 */
import { WebSocket } from 'ws';

export interface StreamIds {
  accountSid: string;
  callSid: string;
  streamSid: string;
}

export interface TwilioStreamClient {
  /** Every message received, in order, with when it arrived. */
  received: { at: number; message: any }[];
  /** The mu-law bytes of every `media` message received. */
  audio(): Buffer;
  /** Bytes received that were played (not dropped by a `clear`). */
  playedBytes(): number;
  violations: string[];
  start(customParameters?: Record<string, string>, mediaFormat?: { encoding: string; sampleRate: number; channels: number }): void;
  /** Sends mu-law as 20 ms `media` messages, paced in real time like a phone line. */
  talk(mulaw: Buffer): Promise<void>;
  dtmf(digit: string): void;
  mark(name: string): void;
  stop(): void;
  sendRaw(text: string): void;
  /** The next received message (from where the last wait stopped) that matches. */
  next(match: string | ((message: any) => boolean), timeoutMs?: number): Promise<any>;
  closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Connects and sends `connected`; rejects with the HTTP status when the upgrade is refused. */
export function connectTwilioStream(url: string, ids: StreamIds): Promise<TwilioStreamClient> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    const received: { at: number; message: any }[] = [];
    const violations: string[] = [];
    const chunks: Buffer[] = [];
    // Twilio's playback buffer: audio bytes and marks, in the order they arrived.
    const queue: ({ bytes: number } | { mark: string })[] = [];
    let played = 0;
    let sequence = 0;
    let chunk = 0;
    let sentMs = 0;
    let cursor = 0;
    const waiters = new Set<() => void>();
    const wake = () => { for (const w of [...waiters]) w(); };
    const send = (message: Record<string, unknown>) => {
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify({ ...message, sequenceNumber: String(++sequence) }));
    };
    const echoMark = (name: string) => send({ event: 'mark', streamSid: ids.streamSid, mark: { name } });
    // Plays 20 ms (160 bytes) every 20 ms; a mark at the head of the queue is echoed when reached.
    const player = setInterval(() => {
      let budget = 160;
      while (queue.length) {
        const head = queue[0]!;
        if ('mark' in head) {
          queue.shift();
          echoMark(head.mark);
          continue;
        }
        if (budget === 0) break;
        const take = Math.min(budget, head.bytes);
        head.bytes -= take;
        budget -= take;
        played += take;
        if (head.bytes === 0) queue.shift();
      }
    }, 20);
    socket.on('message', (data, isBinary) => {
      if (isBinary) return void violations.push('a binary frame (Twilio takes JSON text only)');
      const text = (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as Buffer)).toString('utf8');
      let message: any;
      try {
        message = JSON.parse(text);
      } catch {
        return void violations.push(`not JSON: ${text.slice(0, 80)}`);
      }
      received.push({ at: performance.now(), message });
      if (message.streamSid !== ids.streamSid) violations.push(`${message.event} for streamSid ${message.streamSid}`);
      if (message.event === 'media') {
        const payload = message.media?.payload;
        if (typeof payload !== 'string' || !payload || !BASE64.test(payload)) violations.push('a media message without a base64 payload');
        else {
          const bytes = Buffer.from(payload, 'base64');
          chunks.push(bytes);
          queue.push({ bytes: bytes.length });
        }
      } else if (message.event === 'mark') {
        if (typeof message.mark?.name !== 'string') violations.push('a mark without a name');
        else queue.push({ mark: message.mark.name });
      } else if (message.event === 'clear') {
        // Twilio drops the buffered audio and answers the marks that were waiting behind it.
        for (const item of queue.splice(0)) if ('mark' in item) echoMark(item.mark);
      } else violations.push(`an unknown event ${JSON.stringify(message.event)}`);
      wake();
    });
    const closed = new Promise<{ code: number; reason: string }>((done) => socket.on('close', (code, reason) => {
      clearInterval(player);
      wake();
      done({ code, reason: reason.toString() });
    }));
    socket.on('unexpected-response', (_req, res) => {
      clearInterval(player);
      reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { statusCode: res.statusCode }));
    });
    socket.on('error', (err) => {
      clearInterval(player);
      reject(err);
    });
    socket.on('open', () => {
      socket.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
      resolve({
        received,
        violations,
        closed,
        audio: () => Buffer.concat(chunks),
        playedBytes: () => played,
        start(customParameters = {}, mediaFormat = { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 }) {
          send({ event: 'start', streamSid: ids.streamSid, start: { ...ids, tracks: ['inbound'], customParameters, mediaFormat } });
        },
        async talk(mulaw) {
          const began = performance.now();
          for (let at = 0, n = 0; at < mulaw.length; at += 160, n++) {
            send({
              event: 'media', streamSid: ids.streamSid,
              media: { track: 'inbound', chunk: String(++chunk), timestamp: String(sentMs), payload: mulaw.subarray(at, at + 160).toString('base64') },
            });
            sentMs += 20;
            const wait = began + (n + 1) * 20 - performance.now();
            if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          }
        },
        dtmf: (digit) => send({ event: 'dtmf', streamSid: ids.streamSid, dtmf: { track: 'inbound_track', digit } }),
        mark: (name) => send({ event: 'mark', streamSid: ids.streamSid, mark: { name } }),
        stop: () => send({ event: 'stop', streamSid: ids.streamSid, stop: { accountSid: ids.accountSid, callSid: ids.callSid } }),
        sendRaw: (text) => socket.send(text),
        close: () => socket.close(),
        next(match, timeoutMs = 10_000) {
          const test = typeof match === 'string' ? (m: any) => m.event === match : match;
          return new Promise((found, fail) => {
            const look = () => {
              for (; cursor < received.length; cursor++) {
                if (test(received[cursor]!.message)) {
                  waiters.delete(look);
                  clearTimeout(timer);
                  return found(received[cursor++]!.message);
                }
              }
              if (socket.readyState === socket.CLOSED) {
                waiters.delete(look);
                clearTimeout(timer);
                fail(new Error(`socket closed while waiting; events: ${received.map((r) => r.message.event).join(',')}`));
              }
            };
            const timer = setTimeout(() => {
              waiters.delete(look);
              fail(new Error(`timed out waiting; events: ${received.slice(-20).map((r) => r.message.event).join(',')}`));
            }, timeoutMs);
            waiters.add(look);
            look();
          });
        },
      });
    });
  });
}
