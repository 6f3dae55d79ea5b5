import { runCli } from './cli/program.ts';

// The `parley` command (bin/parley.js runs the built copy). Commands live in src/cli/.
const outcome = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin });
if (outcome !== 'running') {
  // Let what was written reach a pipe before leaving (open sockets would otherwise hold the process).
  process.stdout.write('', () => process.exit(outcome));
}
