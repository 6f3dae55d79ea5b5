import type { FastifyInstance } from 'fastify';
import { badRequest } from './errors.ts';

function hasNul(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (depth > 64 || value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some((v) => hasNul(v, depth + 1));
  return Object.entries(value).some(([k, v]) => k.includes('\u0000') || hasNul(v, depth + 1));
}

/**
 * The JSON body parser: Fastify's own (which refuses `__proto__` and `constructor.prototype`),
 * plus a refusal of NUL characters, which PostgreSQL cannot store in text and which no field of
 * ours has a use for; both dialects answer the same 400.
 */
export function registerJsonBody(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    void parse(request, body.toString(), (err, value) => {
      if (err) return done(err, undefined);
      if (hasNul(value)) return done(badRequest('Text must not contain NUL characters', [{ path: '(body)', message: 'contains \\u0000' }]), undefined);
      return done(null, value);
    });
  });
}
