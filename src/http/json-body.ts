import type { FastifyInstance } from 'fastify';
import { badRequest, type AppError } from './errors.ts';

/** Deeper JSON than this is refused: no field of ours needs it, and serialising it again could overflow the stack. */
export const MAX_JSON_DEPTH = 64;

/** Where a JSON value breaks the rules of findJsonProblem, and how to say it. */
export interface JsonProblem {
  /** `a.b[2]`, or '' for the value itself. */
  path: string;
  /** What is wrong there (`is nested deeper than 64 levels`). */
  message: string;
  /** The same in one sentence (`JSON is nested deeper than 64 levels`). */
  summary: string;
}

/**
 * What no stored JSON may hold, found without recursion (a hostile body may be thousands of
 * levels deep): nesting past MAX_JSON_DEPTH, a NUL character (PostgreSQL cannot store it in text)
 * or a lone UTF-16 surrogate (not valid Unicode: PostgreSQL refuses it, SQLite would silently
 * change it). Request bodies and the LLM's tool arguments (src/calls/tool-arguments.ts) both.
 */
export function findJsonProblem(value: unknown): JsonProblem | null {
  const stack: [unknown, number, string][] = [[value, 0, '']];
  while (stack.length) {
    const [item, depth, path] = stack.pop() as [unknown, number, string];
    if (typeof item === 'string') {
      const problem = textProblem(item);
      if (problem) return { path, message: `contains ${problem}`, summary: `Text must not contain ${problem}` };
      continue;
    }
    if (item === null || typeof item !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) {
      return { path, message: `is nested deeper than ${MAX_JSON_DEPTH} levels`, summary: `JSON is nested deeper than ${MAX_JSON_DEPTH} levels` };
    }
    if (Array.isArray(item)) {
      item.forEach((child, i) => stack.push([child, depth + 1, `${path}[${i}]`]));
      continue;
    }
    for (const [key, child] of Object.entries(item)) {
      const where = path ? `${path}.${key}` : key;
      const problem = textProblem(key);
      if (problem) return { path: where, message: `its name contains ${problem}`, summary: `Text must not contain ${problem}` };
      stack.push([child, depth + 1, where]);
    }
  }
  return null;
}

/** findJsonProblem as the 400 a request body gets, naming where. */
export function jsonProblem(value: unknown): AppError | null {
  const problem = findJsonProblem(value);
  return problem ? badRequest(problem.summary, [{ path: problem.path || '(body)', message: problem.message }]) : null;
}

function textProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'NUL characters (\\u0000)';
  if (!text.isWellFormed()) return 'lone UTF-16 surrogates (invalid Unicode)';
  return null;
}

/**
 * The JSON body parser: Fastify's own (which refuses `__proto__` and `constructor.prototype`),
 * plus the refusals of jsonProblem. A JSON Merge Patch (PATCH) is JSON too.
 */
export function registerJsonBody(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(['application/json', 'application/merge-patch+json'], { parseAs: 'string' }, (request, body, done) => {
    void parse(request, body.toString(), (err, value) => {
      if (err) return done(err, undefined);
      const problem = jsonProblem(value);
      return problem ? done(problem, undefined) : done(null, value);
    });
  });
}
