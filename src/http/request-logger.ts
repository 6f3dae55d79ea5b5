import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString } from 'pino';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type Parent = FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean };

/**
 * The logger of one request: pino's child of the app's logger with the request id bound, built
 * the first time the request writes a line at a level that is enabled. Building a child runs the
 * logger's redaction over its bindings, about 3 µs, and most requests write nothing at the
 * levels a service runs at: Fastify's own two lines per request are `info`. The lines written are
 * the child's own, so they read exactly as before (docs/performance.md).
 */
export class RequestLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: Parent,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  get level(): LevelWithSilentOrString {
    return this.#child?.level ?? this.parent.level;
  }

  set level(level: LevelWithSilentOrString) {
    this.#real().level = level;
  }

  fatal(...args: unknown[]): void {
    this.#write('fatal', args);
  }

  error(...args: unknown[]): void {
    this.#write('error', args);
  }

  warn(...args: unknown[]): void {
    this.#write('warn', args);
  }

  info(...args: unknown[]): void {
    this.#write('info', args);
  }

  debug(...args: unknown[]): void {
    this.#write('debug', args);
  }

  trace(...args: unknown[]): void {
    this.#write('trace', args);
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }

  #write(level: Level, args: unknown[]): void {
    if (this.#child === undefined && this.parent.isLevelEnabled?.(level) === false) return;
    const write: (...a: unknown[]) => void = this.#real()[level];
    write.apply(this.#child, args);
  }

  #real(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }
}

/**
 * Fastify's `childLoggerFactory`: a request logger built lazily. A route with its own log level
 * or serializers gets pino's child at once, since the level decides what is written.
 */
export function requestLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  if (options.level !== undefined || options.serializers !== undefined) return logger.child(bindings, options);
  return new RequestLogger(logger, bindings, options);
}
