import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** Where `npm run build -w console` writes the app, seen from this file (src/http/). */
export const DEFAULT_CONSOLE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../console/dist');

/**
 * No inline script or style, nothing from another origin, never framed. `connect-src` adds
 * ws: and wss: for the call socket, whose URL the API answers (same host, other scheme);
 * `media-src` adds blob: for a call's recording, which the console fetches with the user's token
 * and plays from memory (a token never goes in a URL).
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "media-src 'self' blob:",
  "connect-src 'self' ws: wss:",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const IMMUTABLE = 'public, max-age=31536000, immutable';
const public_ = { auth: { scope: 'public' } } as const;

export interface ConsoleOptions {
  /** The built console (index.html and assets/); the repository's console/dist by default. */
  root?: string;
}

function securityHeaders(reply: FastifyReply): void {
  reply.header('content-security-policy', CONSOLE_CSP);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('cross-origin-opener-policy', 'same-origin');
}

/**
 * The web console at /console: hashed assets cached for a year, index.html never cached and
 * answered for every deep link (/console/assistants/…) so the browser router takes over.
 * Without a build (a clone that skipped `npm install`'s prepare step) it says how to make one.
 * `GET /` leads here too (HOME in system.routes.ts).
 */
export async function consolePlugin(app: FastifyInstance, opts: ConsoleOptions = {}): Promise<void> {
  const root = opts.root ?? DEFAULT_CONSOLE_ROOT;
  const built = existsSync(join(root, 'index.html'));
  // Files beside index.html (favicon…) are served as they are; anything else is a route of the app.
  const topLevel = new Set(built ? readdirSync(root).filter((name) => name !== 'index.html' && statSync(join(root, name)).isFile()) : []);

  app.get('/console', { config: public_, schema: { hide: true } }, async (_request, reply) => reply.redirect('/console/'));

  await app.register(async (scope) => {
    scope.addHook('onSend', async (_request, reply, payload) => {
      securityHeaders(reply);
      return payload;
    });
    if (!built) {
      scope.get('/console/*', { config: public_, schema: { hide: true } }, async (_request, reply) =>
        reply.code(503).type('text/plain; charset=utf-8').send('The console is not built. Run `npm run build:console` (npm install does it).\n'));
      return;
    }
    await scope.register(fastifyStatic, {
      root: join(root, 'assets'),
      prefix: '/console/assets/',
      // Vite puts a content hash in every asset name, so a name never changes content.
      cacheControl: false,
      setHeaders: (res) => {
        res.setHeader('cache-control', IMMUTABLE);
      },
      index: false,
      schemaHide: true,
    });
    scope.get('/console/*', { config: public_, schema: { hide: true } }, async (request, reply) => {
      const rest = (request.params as { '*': string })['*'];
      const file = topLevel.has(rest) ? rest : 'index.html';
      return reply.header('cache-control', 'no-cache').sendFile(file, root, { cacheControl: false });
    });
  });
}
