// Small pieces the call tests share: paced playback of PCM into an RTP session, capture
// of what a session plays out, and waiting for an event with a generous timeout.
import type { EventEmitter } from 'node:events';
import alawmulaw from 'alawmulaw';
import { Pacer } from '../../src/sip/rtp/pacer.ts';
import type { RtpSession } from '../../src/sip/rtp/session.ts';
import type { CodecName } from '../../src/sip/sdp.ts';

/** G.711 of the tests' own audio, through the library the service's media path uses. */
function encodeG711(codec: CodecName, pcm: Int16Array): Buffer {
  const bytes = codec === 'PCMU' ? alawmulaw.mulaw.encode(pcm) : alawmulaw.alaw.encode(pcm);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function decodeG711(codec: CodecName, payload: Buffer): Int16Array {
  const bytes = new Uint8Array(payload.buffer, payload.byteOffset, payload.byteLength);
  return codec === 'PCMU' ? alawmulaw.mulaw.decode(bytes) : alawmulaw.alaw.decode(bytes);
}

/** The egress rule the tests give media: loopback only, which is all they may contact. */
export const loopbackOnly = (ip: string): boolean => ip === '127.0.0.1' || ip === '::1';

/** Sends `pcm` as 20 ms frames, paced like a real call; resolves after the last one. */
export function play(session: RtpSession, pcm: Int16Array, codec: CodecName = 'PCMU'): Promise<void> {
  const payload = encodeG711(codec, pcm);
  return new Promise((resolve) => {
    let offset = 0;
    const pacer = new Pacer(20, () => {
      if (offset + 160 > payload.length || session.closed) {
        pacer.stop();
        return resolve();
      }
      session.send(payload.subarray(offset, offset + 160));
      offset += 160;
    });
    pacer.start();
  });
}

/**
 * What the session plays out from now on, as PCM, without the frames it played while its
 * buffer was dry (nothing had arrived): those only say the event loop or the network paused.
 */
export function capture(session: RtpSession, codec: CodecName = 'PCMU'): () => Int16Array {
  const frames: Buffer[] = [];
  session.on('audio', (frame) => frame.missing < frame.payload.length && frames.push(frame.payload));
  return () => decodeG711(codec, Buffer.concat(frames));
}

/** The first `event` the emitter sends (its arguments), or a rejection after `timeoutMs`. */
export function next<T extends unknown[]>(emitter: EventEmitter, event: string, timeoutMs = 10_000, predicate: (...args: T) => boolean = () => true): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(event, on);
      reject(new Error(`no ${event} within ${timeoutMs} ms`));
    }, timeoutMs);
    const on = (...args: T): void => {
      if (!predicate(...args)) return;
      clearTimeout(timer);
      emitter.off(event, on);
      resolve(args);
    };
    emitter.on(event, on);
  });
}

/** Resolves with `promise`, or rejects after `timeoutMs` saying what was awaited. */
export function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: nothing within ${timeoutMs} ms`)), timeoutMs))),
  ]);
}
