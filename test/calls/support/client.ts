/** A WebSocket call client that keeps every frame and waits for the ones a test expects. */
import { setTimeout as sleep } from 'node:timers/promises';
import { WebSocket } from 'ws';

export interface CallClient {
  frames: any[];
  /** performance.now() when each frame arrived, in the same order. */
  frameTimes: number[];
  /** Binary messages (a voice call's audio), with when each arrived. */
  audio: { at: number; bytes: Buffer }[];
  /** Sends audio bytes as one binary message. */
  sendAudio(bytes: Buffer): void;
  send(frame: unknown): void;
  sendRaw(text: string): void;
  /** The next frame (from where the last wait stopped) that matches. */
  next(match: string | ((frame: any) => boolean), timeoutMs?: number): Promise<any>;
  closed: Promise<{ code: number }>;
  close(): void;
}

/** Connects; rejects with the HTTP status when the server refuses the upgrade. */
export function connect(url: string): Promise<CallClient> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    const frames: any[] = [];
    const frameTimes: number[] = [];
    const audio: { at: number; bytes: Buffer }[] = [];
    let cursor = 0;
    const waiters = new Set<() => void>();
    socket.on('message', (data, isBinary) => {
      const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
      if (isBinary) audio.push({ at: performance.now(), bytes });
      else {
        frames.push(JSON.parse(bytes.toString('utf8')));
        frameTimes.push(performance.now());
      }
      for (const wake of [...waiters]) wake();
    });
    const closed = new Promise<{ code: number }>((done) => socket.on('close', (code) => {
      for (const wake of [...waiters]) wake();
      done({ code });
    }));
    socket.on('unexpected-response', (_req, res) => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { statusCode: res.statusCode })));
    socket.on('error', (err) => reject(err));
    socket.on('open', () => resolve({
      frames,
      frameTimes,
      audio,
      sendAudio: (bytes) => socket.send(bytes, { binary: true }),
      closed,
      send: (frame) => socket.send(JSON.stringify(frame)),
      sendRaw: (text) => socket.send(text),
      close: () => socket.close(),
      next(match, timeoutMs = 5000) {
        const test = typeof match === 'string' ? (f: any) => f.type === match : match;
        return new Promise((found, fail) => {
          const look = () => {
            for (; cursor < frames.length; cursor++) {
              if (test(frames[cursor])) {
                waiters.delete(look);
                clearTimeout(timer);
                found(frames[cursor++]);
                return;
              }
            }
            if (socket.readyState === socket.CLOSED) {
              waiters.delete(look);
              clearTimeout(timer);
              fail(new Error(`socket closed while waiting; frames: ${JSON.stringify(frames)}`));
            }
          };
          const timer = setTimeout(() => {
            waiters.delete(look);
            fail(new Error(`timed out waiting; frames: ${JSON.stringify(frames)}`));
          }, timeoutMs);
          waiters.add(look);
          look();
        });
      },
    }));
  });
}

/** Sends 16-bit PCM as 20 ms binary frames in real time, as a microphone would. */
export async function talk(client: CallClient, pcm: Int16Array, sampleRate = 16000): Promise<void> {
  const frameSamples = sampleRate / 50;
  const start = performance.now();
  for (let i = 0, n = 0; i < pcm.length; i += frameSamples, n++) {
    const frame = pcm.subarray(i, i + frameSamples);
    client.sendAudio(Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength));
    const wait = start + (n + 1) * 20 - performance.now();
    if (wait > 0) await sleep(wait);
  }
}
