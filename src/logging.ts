import pino, { type DestinationStream, type LoggerOptions } from 'pino';
import { prettyFactory } from 'pino-pretty';

/** Keys whose values never reach a log line, wherever they sit in a logged object. */
const SECRET_KEYS = ['authorization', 'password', 'secret', 'token', 'headers', 'apiKey', 'cookie'];

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  ...SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`]),
];

/** Query parameters that carry credentials (the single-use WebSocket call token), by their decoded name. */
const SECRET_QUERY_KEYS = new Set(['token', 'access_token']);

/** A query key as the query-string parser will read it: `+` is a space, percent escapes decoded. */
function decodedKey(raw: string): string | null {
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return null;
  }
}

/**
 * The URL with the values of credential parameters replaced. Keys are compared as the parser
 * decodes them (`%74oken` and `to%6Ben` reach the route as `token`), in any case (`TOKEN`), and
 * every occurrence of a repeated key is scrubbed. A key that cannot be decoded has its value
 * scrubbed too: when in doubt, the log loses a value rather than keeps a secret.
 */
export function scrubUrl(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return url;
  const pairs = url.slice(start + 1).split('&').map((pair) => {
    const equals = pair.indexOf('=');
    if (equals < 0) return pair;
    const key = decodedKey(pair.slice(0, equals));
    const secret = key === null || SECRET_QUERY_KEYS.has(key.toLowerCase().replace(/\[\]$/, ''));
    return secret ? `${pair.slice(0, equals)}=[Redacted]` : pair;
  });
  return `${url.slice(0, start)}?${pairs.join('&')}`;
}

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[Redacted]' },
    serializers: {
      req: (req: { method: string; url: string; headers: Record<string, unknown>; socket?: { remoteAddress?: string } }) => ({
        method: req.method,
        url: scrubUrl(req.url),
        remoteAddress: req.socket?.remoteAddress,
      }),
    },
  };
}

/** Where the log lines of a process go: the terminal, or any other output (a file, a pipe, a collector). */
interface LogOutput {
  readonly fd: number;
  readonly isTTY?: boolean;
}

/**
 * The stream pino writes to: JSON lines (pino's own, null here) unless the format asks for
 * readable lines, which `auto` does when the output is a terminal. The readable lines are made
 * on this thread from the JSON line pino wrote (redaction already done), and written
 * synchronously: pino-pretty's transport would run them through a stream pipeline (or a worker
 * thread), where the last lines before an exit can be lost.
 */
export function logDestination(format: 'auto' | 'json' | 'pretty', output: LogOutput): DestinationStream | null {
  if (format === 'json' || (format === 'auto' && output.isTTY !== true)) return null;
  const pretty = prettyFactory({
    colorize: output.isTTY === true,
    translateTime: 'SYS:HH:MM:ss.l',
    // `check` tags the start-up lines for scripts that read the JSON; a person reads the message.
    ignore: 'pid,hostname,check',
    singleLine: true,
  });
  const out = pino.destination({ dest: output.fd, sync: true });
  return { write: (line: string) => out.write(pretty(line)) };
}
