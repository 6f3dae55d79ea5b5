import type { LookupFunction } from 'node:net';
import WebSocket from 'ws';
import { TtsError } from './types.ts';

/** `https://` and `http://` bases name the same host's WebSocket endpoints. */
export function webSocketBase(baseUrl: string): string {
  return baseUrl.replace(/^http(s?):\/\//, 'ws$1://').replace(/\/+$/, '');
}

/**
 * Opens a provider WebSocket. A refused handshake (401, 5xx) becomes a TtsError with the HTTP
 * status; a network failure one without. Nothing is left open when it fails or is aborted.
 */
export function openSocket(
  provider: string, url: string, headers: Record<string, string>, signal: AbortSignal,
  { timeoutMs = 10_000, lookup }: { timeoutMs?: number; lookup?: LookupFunction | undefined } = {},
): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new TtsError(provider, 'connection aborted'));
      return;
    }
    const socket = new WebSocket(url, { headers, handshakeTimeout: timeoutMs, ...(lookup ? { lookup } : {}) });
    const fail = (error: TtsError) => {
      signal.removeEventListener('abort', onAbort);
      socket.removeAllListeners();
      socket.on('error', () => {});
      socket.terminate();
      reject(error);
    };
    const onAbort = () => fail(new TtsError(provider, 'connection aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('unexpected-response', (_req, res) => {
      res.resume();
      fail(new TtsError(provider, `handshake refused with HTTP ${res.statusCode ?? '?'}`, res.statusCode));
    });
    // The error's message names the host and port at most (ECONNREFUSED 127.0.0.1:1), never headers.
    socket.once('error', (err) => fail(new TtsError(provider, `connection failed: ${err.message}`)));
    socket.once('open', () => {
      signal.removeEventListener('abort', onAbort);
      socket.removeAllListeners();
      resolve(socket);
    });
  });
}

/** Resolves once the socket is closed, closing it first if it is not. */
export function closeSocket(socket: WebSocket, timeoutMs = 2_000): Promise<void> {
  if (socket.readyState === WebSocket.CLOSED) return Promise.resolve();
  return new Promise((resolve) => {
    // A peer that never answers the close frame is cut off rather than waited for.
    const timer = setTimeout(() => socket.terminate(), timeoutMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    if (socket.readyState === WebSocket.OPEN) socket.close(1000);
  });
}
