/**
 * A fake Deepgram Aura streaming TTS WebSocket (`/v1/speak`) on 127.0.0.1, as Deepgram documents
 * it: the handshake takes `Authorization: Token <key>` (else 401) and
 * the query `model`, `encoding` (linear16, mulaw or alaw), `sample_rate` (linear16: 8000, 16000,
 * 24000, 32000 or 48000; mulaw and alaw: 8000 or 16000) and `speed` (0.7..1.5); anything else is
 * a 400. On connecting it sends `Metadata`. Text messages are `Speak` ({ type, text }, at most
 * 2,000 characters), `Flush`, `Clear` and `Close`; a Flush speaks the buffered text as binary
 * audio messages (raw, no header) and then `Flushed` with its sequence_id; a Clear stops that and
 * empties the buffer, then `Cleared`; Close speaks what is buffered and closes. More than 20
 * Flushes in 60 s get a `Warning` instead of audio. Anything else closes the socket with 1008
 * DATA-0000. The speech is espeak-ng's (not Parley's), resampled to the rate asked for.
 */
import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import { concatPcm, pcmBytes, speak } from '../audio.ts';
import { delay, messageText, startFakeServer } from '../server.ts';
import type { TtsFake, TtsFakeOptions } from './contract.ts';

const MODEL = 'aura-2-conformance-en';
const RATES: Record<string, number[]> = { linear16: [8000, 16000, 24000, 32000, 48000], mulaw: [8000, 16000], alaw: [8000, 16000] };
const QUERY = new Set(['model', 'encoding', 'sample_rate', 'speed', 'mip_opt_out']);
const FLUSH_LIMIT = 20;
const FLUSH_WINDOW_MS = 60_000;

/** G.711 of the fake's own (not the code under test's): the standard mu-law and A-law formulas. */
function companded(pcm: Int16Array, encoding: string): Buffer {
  if (encoding === 'linear16') return pcmBytes(pcm);
  const out = Buffer.alloc(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = encoding === 'mulaw' ? mulaw(pcm[i]!) : alaw(pcm[i]!);
  return out;
}

function mulaw(sample: number): number {
  const sign = sample < 0 ? 0x80 : 0;
  const magnitude = Math.min(Math.abs(sample), 32635) + 0x84;
  let exponent = 7;
  for (let mask = 0x4000; (magnitude & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (magnitude >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

function alaw(sample: number): number {
  const sign = sample >= 0 ? 0x80 : 0;
  const magnitude = Math.min(Math.abs(sample), 32767) >> 3;
  let exponent = 0;
  for (let value = magnitude >> 4; value > 1 && exponent < 7; value >>= 1) exponent++;
  const mantissa = exponent === 0 ? (magnitude >> 1) & 0x0f : (magnitude >> exponent) & 0x0f;
  return (sign | (exponent << 4) | mantissa) ^ 0x55;
}

export async function startTtsFake({ apiKey, outputSampleRate }: TtsFakeOptions): Promise<TtsFake> {
  const sampleRate = RATES.linear16!.find((rate) => rate >= outputSampleRate) ?? 48000;
  const violations: string[] = [];
  const sent: { text: string; pcm: Int16Array }[] = [];
  let chunkIntervalMs = 2;
  let failNext = false;
  let dropAfter: number | null = null;

  const server = await startFakeServer({
    upgrade(req) {
      const url = new URL(req.url ?? '/', 'http://fake');
      if (req.headers.authorization !== `Token ${apiKey}`) return 401;
      const wrong: string[] = [];
      if (url.pathname !== '/v1/speak') wrong.push(`path ${url.pathname}`);
      for (const key of url.searchParams.keys()) if (!QUERY.has(key)) wrong.push(`unexpected query parameter ${key}`);
      const encoding = url.searchParams.get('encoding') ?? 'linear16';
      const rate = Number(url.searchParams.get('sample_rate') ?? (encoding === 'linear16' ? 24000 : 8000));
      if (!RATES[encoding]) wrong.push(`encoding ${encoding}`);
      else if (!RATES[encoding].includes(rate)) wrong.push(`sample_rate ${rate} for ${encoding}`);
      // The client under test speaks linear16 at the rate nearest the strategy's: anything else is its mistake.
      if (encoding !== 'linear16' || rate !== sampleRate) wrong.push(`expected linear16 at ${sampleRate} Hz, got ${encoding} at ${rate} Hz`);
      if (url.searchParams.get('model') !== MODEL) wrong.push(`model ${url.searchParams.get('model')}`);
      const speed = url.searchParams.get('speed');
      if (speed !== null && !(Number(speed) >= 0.7 && Number(speed) <= 1.5)) wrong.push(`speed ${speed}`);
      if (wrong.length) {
        violations.push(...wrong);
        return 400;
      }
      return null;
    },
    connection(socket, req) {
      const url = new URL(req.url ?? '/', 'http://fake');
      const encoding = url.searchParams.get('encoding') ?? 'linear16';
      socket.send(JSON.stringify({ type: 'Metadata', request_id: randomUUID(), model_name: MODEL, model_version: '2025-04-07.0', model_uuid: randomUUID() }));
      serve(socket, encoding);
    },
  });

  function serve(socket: WebSocket, encoding: string): void {
    let buffered = '';
    let sequence = 0;
    /** Bumped by a Clear: generation under an older one stops. */
    let generation = 0;
    let queue: Promise<void> = Promise.resolve();
    const flushes: number[] = [];
    const violate = (message: string) => {
      violations.push(message);
      socket.close(1008, 'DATA-0000');
    };

    socket.on('message', (data, isBinary) => {
      if (isBinary) return violate('a binary message from the client');
      let message: { type?: unknown; text?: unknown };
      try {
        message = JSON.parse(messageText(data)) as typeof message;
      } catch {
        return violate('a text message that is not JSON');
      }
      const keys = Object.keys(message).sort().join(',');
      switch (message.type) {
        case 'Speak':
          if (keys !== 'text,type' || typeof message.text !== 'string' || message.text === '' || message.text.length > 2000) return violate(`Speak ${JSON.stringify(message).slice(0, 100)}`);
          buffered += message.text;
          return;
        case 'Flush': {
          if (keys !== 'type') return violate(`Flush ${keys}`);
          const now = Date.now();
          while (flushes.length && (flushes[0] as number) <= now - FLUSH_WINDOW_MS) flushes.shift();
          if (flushes.length >= FLUSH_LIMIT) {
            socket.send(JSON.stringify({ type: 'Warning', description: 'Exceeded the maximum number of Flush messages (20) per 60 seconds', code: 'FLUSH_LIMIT_EXCEEDED' }));
            return;
          }
          flushes.push(now);
          const text = buffered;
          buffered = '';
          const id = sequence++;
          const mine = generation;
          queue = queue.then(() => speakFlush(text, id, mine));
          return;
        }
        case 'Clear': {
          if (keys !== 'type') return violate(`Clear ${keys}`);
          buffered = '';
          generation++;
          const id = sequence++;
          queue = queue.then(() => void (socket.readyState === socket.OPEN && socket.send(JSON.stringify({ type: 'Cleared', sequence_id: id }))));
          return;
        }
        case 'Close':
          if (keys !== 'type') return violate(`Close ${keys}`);
          queue = queue.then(async () => {
            if (buffered) await speakFlush(buffered, sequence++, generation);
            socket.close(1000);
          });
          return;
        default:
          return violate(`unknown message type ${String(message.type)}`);
      }
    });

    async function speakFlush(text: string, id: number, mine: number): Promise<void> {
      if (failNext) {
        failNext = false;
        // Deepgram ends a stream it cannot go on with by closing the socket, 1011 and a reason code.
        socket.close(1011, 'NET-0000');
        return;
      }
      const pcm = text.trim() ? await speak(text.trim(), sampleRate) : new Int16Array(0);
      const record: { text: string; pcm: Int16Array } = { text: text.trim(), pcm: new Int16Array(0) };
      sent.push(record);
      const parts: Int16Array[] = [];
      let chunks = 0;
      for (let offset = 0; offset < pcm.length; offset += 2400) {
        if (socket.readyState !== socket.OPEN || generation !== mine) return;
        if (dropAfter !== null && chunks >= dropAfter) {
          dropAfter = null;
          socket.terminate();
          return;
        }
        const chunk = pcm.subarray(offset, offset + 2400);
        socket.send(companded(chunk, encoding));
        parts.push(chunk);
        record.pcm = concatPcm(parts);
        chunks++;
        await delay(chunkIntervalMs);
      }
      if (socket.readyState === socket.OPEN && generation === mine) socket.send(JSON.stringify({ type: 'Flushed', sequence_id: id }));
    }
  }

  return {
    baseUrl: `ws://127.0.0.1:${server.port}`,
    voice: { voiceId: MODEL, speed: 1.1 },
    sampleRate,
    sent: () => sent,
    pace: (ms) => void (chunkIntervalMs = ms),
    failNextSentence: () => void (failNext = true),
    dropAfterChunks: (count) => void (dropAfter = count),
    violations: () => violations,
    close: () => server.close(),
  };
}
