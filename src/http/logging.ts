import type { LoggerOptions } from 'pino';

/** Keys whose values never reach a log line, wherever they sit in a logged object. */
const SECRET_KEYS = ['authorization', 'password', 'secret', 'token', 'headers', 'apiKey', 'cookie'];

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  ...SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`]),
];

/** Query parameters that carry credentials (the single-use WebSocket call token). */
function scrubUrl(url: string): string {
  return url.replace(/([?&](?:token|access_token)=)[^&]*/gi, '$1[Redacted]');
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
