import type { WebSocket } from 'ws';
import { parseClientFrame, type ClientFrame, type ServerFrame } from '../frames.ts';
import type { CallTransport, TransportInfo } from './transport.ts';

export const websocketTransportInfo = (): TransportInfo => ({ type: 'websocket' });

export interface WebSocketHandlers {
  frame(frame: ClientFrame): void;
  /** The socket closed (by the client, the network or us). */
  closed(): void;
}

/** JSON text frames over a WebSocket. A bad frame is answered with an `error` frame; the call goes on. */
export function websocketTransport(socket: WebSocket, handlers: WebSocketHandlers): CallTransport {
  const transport: CallTransport = {
    info: websocketTransportInfo(),
    send(frame: ServerFrame) {
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(frame));
    },
    close() {
      if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) socket.close(1000, 'call ended');
    },
  };
  socket.on('message', (data, isBinary) => {
    if (isBinary) return transport.send({ type: 'error', message: 'Binary frames are not accepted; send JSON text' });
    const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(data).toString('utf8');
    const parsed = parseClientFrame(text);
    if ('error' in parsed) return transport.send({ type: 'error', message: parsed.error });
    handlers.frame(parsed);
  });
  socket.on('close', () => handlers.closed());
  return transport;
}
