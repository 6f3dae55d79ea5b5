/**
 * Database failures that mean "the database is not there right now", as opposed to a bug:
 * answered 503 with Retry-After instead of 500, and logged as what they are (a full disk says so).
 */
export type DatabaseTrouble = { reason: 'unreachable' | 'busy' | 'disk_full' | 'timeout' };

const UNREACHABLE = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EHOSTUNREACH', 'EPIPE', 'ETIMEDOUT',
  '57P01', '57P02', '57P03', // admin shutdown, crash shutdown, cannot connect now
  '08000', '08001', '08003', '08004', '08006', // connection exceptions
  '53300', // too many connections
]);

export function databaseTrouble(err: unknown): DatabaseTrouble | null {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  if (code === 'SQLITE_FULL' || code === '53100' || /no space left|disk is full|database or disk is full/i.test(text)) return { reason: 'disk_full' };
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' || code === '55P03') return { reason: 'busy' };
  if (code === '57014' || /timeout exceeded when trying to connect|Query read timeout|Connection terminated due to connection timeout/i.test(text)) return { reason: 'timeout' };
  if (typeof code === 'string' && (UNREACHABLE.has(code) || code.startsWith('SQLITE_IOERR') || code === 'SQLITE_CANTOPEN')) return { reason: 'unreachable' };
  if (/Connection terminated|connection is closed|Client has encountered a connection error/i.test(text)) return { reason: 'unreachable' };
  return null;
}

/** How long after a write failed for lack of space /readyz still reports the disk full. */
export const DISK_FULL_MEMORY_MS = 60_000;

/**
 * Remembers when a write last failed because the disk was full (one per app), so /readyz can
 * say so: PostgreSQL's disk is the server's, and its fullness is only known from such errors.
 */
export class DiskFullAlarm {
  private at: number | null = null;

  note(now: Date): void {
    this.at = now.getTime();
  }

  recent(now: Date): boolean {
    return this.at !== null && now.getTime() - this.at < DISK_FULL_MEMORY_MS;
  }
}
