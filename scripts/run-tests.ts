/**
 * The suite's runner: Node's test runner through its `run()` API, which starts the files in the
 * order given (`node --test` sorts them by name), so scripts/test.sh can start the longest first.
 * Run with `node --import tsx`: the files' processes inherit that flag.
 */
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { pipeline } from 'node:stream/promises';

const files = process.argv.slice(2);
const concurrency = Number(process.env.TEST_CONCURRENCY ?? '2');
// forceExit: a test file whose tests are done exits even if a failed test left a server or socket
// open; without it that file's process waits forever and the suite with it.
const stream = run({ files, concurrency, forceExit: true });
stream.on('test:fail', () => {
  process.exitCode = 1;
});
await pipeline(stream, new spec(), process.stdout);
