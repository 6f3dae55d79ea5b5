// Types for the parts of `ws` that Parley and @fastify/websocket use. `ws` ships no types and
// only `ws`, `@fastify/websocket` and `openai` were added as dependencies, so the surface is
// declared here; drop this file if `@types/ws` is ever installed.
declare module 'ws' {
  import { EventEmitter } from 'node:events';
  import type { ClientRequest, IncomingMessage, Server as HttpServer } from 'node:http';
  import type { Duplex } from 'node:stream';

  export type RawData = Buffer | ArrayBuffer | Buffer[];

  export interface ClientOptions {
    headers?: Record<string, string>;
    handshakeTimeout?: number;
    maxPayload?: number;
  }

  export interface ServerOptions {
    maxPayload?: number;
    clientTracking?: boolean;
    perMessageDeflate?: boolean;
    noServer?: boolean;
    path?: string;
    server?: HttpServer;
  }

  export class WebSocket extends EventEmitter {
    static readonly CONNECTING: 0;
    static readonly OPEN: 1;
    static readonly CLOSING: 2;
    static readonly CLOSED: 3;
    readonly CONNECTING: 0;
    readonly OPEN: 1;
    readonly CLOSING: 2;
    readonly CLOSED: 3;
    readonly readyState: 0 | 1 | 2 | 3;
    readonly bufferedAmount: number;
    constructor(address: string | URL, options?: ClientOptions);
    send(data: string | Buffer, cb?: (err?: Error) => void): void;
    close(code?: number, reason?: string | Buffer): void;
    terminate(): void;
    on(event: 'message', listener: (data: RawData, isBinary: boolean) => void): this;
    on(event: 'close', listener: (code: number, reason: Buffer) => void): this;
    on(event: 'error', listener: (err: Error) => void): this;
    on(event: 'open', listener: () => void): this;
    on(event: 'unexpected-response', listener: (req: ClientRequest, res: IncomingMessage) => void): this;
    once(event: 'message', listener: (data: RawData, isBinary: boolean) => void): this;
    once(event: 'close', listener: (code: number, reason: Buffer) => void): this;
    once(event: 'error', listener: (err: Error) => void): this;
    once(event: 'open', listener: () => void): this;
    once(event: 'unexpected-response', listener: (req: ClientRequest, res: IncomingMessage) => void): this;
  }

  export class WebSocketServer extends EventEmitter {
    readonly clients: Set<WebSocket>;
    constructor(options?: ServerOptions);
    close(cb?: (err?: Error) => void): void;
    handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, callback: (client: WebSocket, request: IncomingMessage) => void): void;
  }
  export { WebSocketServer as Server };
  export default WebSocket;
}
