import type { RawData, WebSocket } from 'ws';
import type { AudioFormat } from '../../voice/audio/format.ts';
import { parseClientFrame, type ClientFrame, type ServerFrame } from '../frames.ts';
import type { AudioLink } from '../voice/link.ts';
import type { CallTransport, TransportInfo } from './transport.ts';

/** A WebSocket call; `clientTools` when its client answers its tool webhooks (the record shows it; tool webhooks never see it). */
export const websocketTransportInfo = (clientTools = false): TransportInfo => ({ type: 'websocket', ...(clientTools ? { clientTools: true as const } : {}) });

/** Output a client has not read yet; past it the client is not keeping up and is cut off. */
export const MAX_BUFFERED_BYTES = 1024 * 1024;
/** Refused frames one call may send before it is closed as abusive. */
export const MAX_BAD_FRAMES = 50;
/** 20 ms frames a WebSocket client may have buffered ahead of playing (the rest is paced in real time). */
export const WEBSOCKET_AUDIO_LEAD = 5;

export interface WebSocketHandlers {
  frame(frame: ClientFrame): void;
  /** The socket closed (by the client, the network or us). */
  closed(): void;
}

const bytes = (data: RawData) => (Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data));

/**
 * A call over a WebSocket: JSON text frames both ways, and, for a voice call (`audio` given),
 * binary frames of audio in that format both ways (the caller's microphone in, 20 ms frames of
 * the assistant's voice out). A bad frame is answered with an `error` frame and the call goes
 * on, up to MAX_BAD_FRAMES; a client that stops reading is cut off once MAX_BUFFERED_BYTES wait
 * for it, so it cannot make the process hold its output in memory.
 */
export function websocketTransport(socket: WebSocket, handlers: WebSocketHandlers, audio?: AudioFormat): { transport: CallTransport; link: AudioLink | null } {
  let badFrames = 0;
  const listeners: ((chunk: Buffer) => void)[] = [];
  const out = (data: string | Buffer) => {
    if (socket.readyState !== socket.OPEN) return;
    if (socket.bufferedAmount > MAX_BUFFERED_BYTES) return void socket.terminate();
    socket.send(data);
  };
  const transport: CallTransport = {
    info: websocketTransportInfo(),
    send: (frame: ServerFrame) => out(JSON.stringify(frame)),
    close() {
      if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) socket.close(1000, 'call ended');
    },
  };
  const link: AudioLink | null = audio
    ? {
        format: audio,
        lead: WEBSOCKET_AUDIO_LEAD,
        sendFrame: (frame) => out(frame),
        // The `interrupted` frame the session sends tells the client to drop its buffer.
        flushPeer: () => {},
        onAudio: (listener) => void listeners.push(listener),
      }
    : null;
  const refuse = (message: string) => {
    if (++badFrames > MAX_BAD_FRAMES) return void socket.close(1008, 'too many invalid frames');
    transport.send({ type: 'error', message });
  };
  socket.on('message', (data, isBinary) => {
    if (isBinary) {
      if (!link) return refuse('Binary frames are audio, and this call has none; start it with "audio" to talk, or send JSON text');
      const chunk = bytes(data);
      for (const listener of listeners) listener(chunk);
      return;
    }
    const parsed = parseClientFrame(bytes(data).toString('utf8'));
    if ('error' in parsed) return refuse(parsed.error);
    handlers.frame(parsed);
  });
  socket.on('close', () => handlers.closed());
  return { transport, link };
}
