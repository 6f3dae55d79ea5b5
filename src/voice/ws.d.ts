// The parts of `ws` the voice code and its test fakes use beyond those src/calls/ws.d.ts declares,
// merged into that declaration (kept apart so the two stay easy to reconcile).
declare module 'ws' {
  import type { IncomingMessage } from 'node:http';
  import type { Duplex } from 'node:stream';

  interface ClientOptions {
    /** Audio does not compress; ws offers permessage-deflate unless told not to. */
    perMessageDeflate?: boolean;
  }

  interface WebSocketServer {
    handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, callback: (client: WebSocket, request: IncomingMessage) => void): void;
  }
}
