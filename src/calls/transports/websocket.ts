import type { RawData, WebSocket } from 'ws';
import { parseClientFrame, type ClientFrame, type ServerFrame } from '../frames.ts';
import type { CallTransport, TransportInfo } from './transport.ts';

export const websocketTransportInfo = (): TransportInfo => ({ type: 'websocket' });

/** Output a client has not read yet; past it the client is not keeping up and is cut off. */
export const MAX_BUFFERED_BYTES = 1024 * 1024;
/** Refused frames one call may send before it is closed as abusive. */
export const MAX_BAD_FRAMES = 50;

export interface WebSocketHandlers {
  frame(frame: ClientFrame): void;
  /** The socket closed (by the client, the network or us). */
  closed(): void;
}

const text = (data: RawData) => (Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data)).toString('utf8');

/**
 * JSON text frames over a WebSocket. A bad frame is answered with an `error` frame and the call
 * goes on, up to MAX_BAD_FRAMES; a client that stops reading is cut off once MAX_BUFFERED_BYTES
 * wait for it, so it cannot make the process hold its output in memory.
 */
export function websocketTransport(socket: WebSocket, handlers: WebSocketHandlers): CallTransport {
  let badFrames = 0;
  const transport: CallTransport = {
    info: websocketTransportInfo(),
    send(frame: ServerFrame) {
      if (socket.readyState !== socket.OPEN) return;
      if (socket.bufferedAmount > MAX_BUFFERED_BYTES) return void socket.terminate();
      socket.send(JSON.stringify(frame));
    },
    close() {
      if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) socket.close(1000, 'call ended');
    },
  };
  const refuse = (message: string) => {
    if (++badFrames > MAX_BAD_FRAMES) return void socket.close(1008, 'too many invalid frames');
    transport.send({ type: 'error', message });
  };
  socket.on('message', (data, isBinary) => {
    if (isBinary) return refuse('Binary frames are not accepted; send JSON text');
    const parsed = parseClientFrame(text(data));
    if ('error' in parsed) return refuse(parsed.error);
    handlers.frame(parsed);
  });
  socket.on('close', () => handlers.closed());
  return transport;
}
