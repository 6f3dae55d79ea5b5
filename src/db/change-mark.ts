import { closeSync, openSync, readSync } from 'node:fs';
import type SQLite from 'better-sqlite3';

/** The first copy of the WAL-index header: 48 bytes at the start of the `-shm` file. */
const HEADER_BYTES = 48;

export interface ChangeMark {
  /** A number that changes whenever anyone commits a write to the database. */
  read(): number;
  close(): void;
}

/**
 * The change mark of a SQLite database in WAL mode, read from the WAL-index header that every
 * connection of every process shares (the `-shm` file, mapped into memory by each of them). In
 * SQLite's documented WAL-index format the header holds `iChange`, a counter every committed
 * transaction increments, beside the WAL's last frame and its salts; a commit becomes visible to
 * readers when the writer stores this copy of the header. So the header's 48 bytes are the same
 * for as long as nothing is committed, and different after any commit, by this process or another.
 *
 * One `pread` of those bytes costs about a quarter of `PRAGMA data_version`, which takes and
 * releases a shared lock on the database file (two `fcntl` calls) to ask the same question: the
 * largest cost a kept GET paid (docs/performance.md). A read that races a commit may see a header
 * half written: that reads as a change, and costs one read of the data again, never a stale one.
 * Where the `-shm` file cannot be opened, the pragma answers.
 */
export function changeMarkOf(filename: string, reader: SQLite.Database): ChangeMark {
  const dataVersion = reader.prepare('PRAGMA data_version').pluck();
  // A read opens the WAL index, creating the `-shm` file on a new database.
  dataVersion.get();
  let fd: number;
  try {
    fd = openSync(`${filename}-shm`, 'r');
  } catch {
    return { read: () => dataVersion.get() as number, close: () => {} };
  }
  const seen = Buffer.alloc(HEADER_BYTES);
  const now = Buffer.alloc(HEADER_BYTES);
  let mark = 0;
  return {
    read() {
      readSync(fd, now, 0, HEADER_BYTES, 0);
      if (!now.equals(seen)) {
        now.copy(seen);
        mark++;
      }
      return mark;
    },
    close: () => closeSync(fd),
  };
}
