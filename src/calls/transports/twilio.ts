import type { RawData, WebSocket } from 'ws';
import type { AudioFormat } from '../../voice/audio/format.ts';
import type { AudioLink } from '../voice/link.ts';
import type { CallTransport, TransportInfo } from './transport.ts';
import { parseTwilioMessage, type ToTwilio, type TwilioStart } from './twilio-messages.ts';
import { MAX_BAD_FRAMES, MAX_BUFFERED_BYTES } from './websocket.ts';

/** What Twilio Media Streams carry both ways: mu-law, 8 kHz, mono. */
export const TWILIO_AUDIO: AudioFormat = { encoding: 'mulaw', sampleRate: 8000 };
/** The mediaFormat of a `start` message that Parley can speak. */
const TWILIO_ENCODING = 'audio/x-mulaw';

/**
 * 20 ms frames sent ahead of real time. Twilio buffers what it gets and plays it in order, so a
 * little lead rides out network jitter; on barge-in `clear` drops it, so it costs no delay there,
 * and the pacer subtracts it from what the caller heard. The same 100 ms as the call WebSocket.
 */
export const TWILIO_AUDIO_LEAD = 5;
/** The mark sent before the socket closes: Twilio echoes it once the audio ahead of it has played. */
export const CLOSING_MARK = 'parley-call-ended';
/** The longest the close waits for that echo: the lead's 100 ms, plus a round trip with room to spare. */
export const CLOSE_DRAIN_MS = 1_500;

export interface TwilioStreamHandlers {
  /** The `start` message: the stream's ids and format. The caller's audio flows from here on. */
  started(start: TwilioStart): void;
  /** The caller pressed a key (`0`-`9`, `*`, `#`). */
  dtmf(digit: string): void;
  /** Twilio's `stop`: the caller hung up, or the stream was stopped. */
  stopped(): void;
  /** The socket closed (after `stop`, or without one). */
  closed(): void;
  /** The stream cannot carry this call (a format Parley does not speak): the call should end, saying why. */
  refused(reason: string): void;
}

const bytes = (data: RawData) => (Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data));

/**
 * A call over a Twilio Media Streams WebSocket (`<Connect><Stream>`), or any trunk that speaks
 * that protocol. Audio goes both ways as `media` messages of base64 mu-law; barge-in sends
 * `clear`. The call's JSON frames (transcripts, tool frames) have no place in this protocol and
 * are not sent: the call record keeps all of them. One mark is used: when the call ends, the
 * socket closes only once Twilio has played the audio it still buffers (the lead), so the
 * goodbye is not cut; see docs/twilio.md for why marks are not used for barge-in. Malformed
 * messages are ignored, up to MAX_BAD_FRAMES, after which the socket is closed.
 */
export function twilioMediaStreamTransport(socket: WebSocket, info: TransportInfo, handlers: TwilioStreamHandlers): { transport: CallTransport; link: AudioLink } {
  const listeners: ((chunk: Buffer) => void)[] = [];
  let streamSid: string | null = null;
  let stopped = false;
  let badMessages = 0;
  /** Audio sent since the last `clear`: only then may Twilio still be playing. */
  let unplayed = false;
  let drained: (() => void) | null = null;
  const out = (message: ToTwilio) => {
    if (socket.readyState !== socket.OPEN) return;
    if (socket.bufferedAmount > MAX_BUFFERED_BYTES) return void socket.terminate();
    socket.send(JSON.stringify(message));
  };
  const transport: CallTransport = {
    info,
    // JSON frames are Parley's own protocol; Twilio would not understand them.
    send: () => {},
    close() {
      const shut = () => {
        if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) socket.close(1000, 'call ended');
      };
      if (drained) return; // already waiting for the echo
      if (!streamSid || stopped || !unplayed || socket.readyState !== socket.OPEN) return shut();
      // Closing the socket ends Twilio's stream at once, dropping what it has not played yet.
      const timer = setTimeout(() => drained?.(), CLOSE_DRAIN_MS).unref();
      drained = () => {
        clearTimeout(timer);
        shut();
      };
      out({ event: 'mark', streamSid, mark: { name: CLOSING_MARK } });
    },
  };
  const link: AudioLink = {
    format: TWILIO_AUDIO,
    lead: TWILIO_AUDIO_LEAD,
    sendFrame(frame) {
      if (!streamSid) return;
      unplayed = true;
      out({ event: 'media', streamSid, media: { payload: frame.toString('base64') } });
    },
    flushPeer() {
      if (!streamSid) return;
      unplayed = false;
      out({ event: 'clear', streamSid });
    },
    onAudio: (listener) => void listeners.push(listener),
  };
  const bad = () => {
    if (++badMessages > MAX_BAD_FRAMES) socket.close(1008, 'too many invalid messages');
  };
  socket.on('message', (data, isBinary) => {
    if (isBinary) return bad();
    const message = parseTwilioMessage(bytes(data).toString('utf8'));
    if ('error' in message) return bad();
    switch (message.event) {
      case 'start': {
        if (streamSid) return;
        const { mediaFormat } = message.start;
        if (mediaFormat.encoding !== TWILIO_ENCODING || mediaFormat.sampleRate !== TWILIO_AUDIO.sampleRate || mediaFormat.channels !== 1) {
          return handlers.refused(`the stream's audio is ${mediaFormat.encoding} at ${mediaFormat.sampleRate} Hz, ${mediaFormat.channels} channel(s); Parley speaks ${TWILIO_ENCODING} at 8000 Hz, mono`);
        }
        streamSid = message.start.streamSid;
        return handlers.started(message.start);
      }
      case 'media': {
        // Only the caller's side: a stream of both tracks also carries what the caller hears.
        if (!streamSid || stopped || (message.media.track !== undefined && message.media.track !== 'inbound')) return;
        const chunk = Buffer.from(message.media.payload, 'base64');
        if (chunk.length) for (const listener of listeners) listener(chunk);
        return;
      }
      case 'dtmf':
        return streamSid && !stopped ? handlers.dtmf(message.dtmf.digit.toUpperCase()) : undefined;
      case 'stop':
        if (stopped) return;
        stopped = true;
        return handlers.stopped();
      case 'mark':
        if (message.mark.name === CLOSING_MARK) drained?.();
        return;
      case 'connected':
        return;
    }
  });
  socket.on('close', () => {
    drained = null;
    handlers.closed();
  });
  return { transport, link };
}
