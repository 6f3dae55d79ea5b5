import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { chatCommand } from './chat.ts';
import { doctorCommand } from './doctor.ts';
import { environmentCommand } from './environment.ts';
import { EXIT, describeError, type CliIo, type Outcome } from './io.ts';
import { labCommand } from './lab.ts';
import { pullCommand } from './pull.ts';
import { diffCommand, pushCommand } from './push.ts';
import { migrateCommand, serveCommand, workerCommand } from './service.ts';
import { setupCommand } from './setup.ts';
import { testCommand } from './test/command.ts';
import { tokenCommand } from './token.ts';

/** package.json sits two folders up from src/cli/ and from dist/cli/ alike. */
function version(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/**
 * The `parley` command line: one commander program, each command in its own file. Usage errors
 * (an unknown command or flag, a bad value) exit 2 with what was expected; a command that
 * fails exits 1 with its reason; `serve` and `worker` keep running.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<Outcome> {
  let outcome: Outcome = EXIT.ok;
  const done = (result: Outcome) => {
    outcome = result;
  };
  const program = new Command('parley')
    .description('Parley: a self-hostable control plane for voice AI assistants.')
    .version(version(), '-v, --version', 'print the version')
    .helpCommand('help [command]', 'show the help of a command (parley help environment: every environment variable)')
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .showHelpAfterError('(parley --help lists the commands; parley <command> --help shows one)')
    // `parley test --version 3` is the test command's flag, not the program's -v/--version.
    .enablePositionalOptions()
    .exitOverride()
    .addHelpText('after', '\nStart here: docs/getting-started.md. Environment variables: parley help environment.');
  for (const make of [serveCommand, workerCommand, migrateCommand, doctorCommand, setupCommand, chatCommand, testCommand, tokenCommand, environmentCommand, pullCommand, diffCommand, pushCommand, labCommand]) {
    program.addCommand(make(io, done));
  }
  for (const command of program.commands) {
    command.exitOverride().configureOutput(program.configureOutput()).showHelpAfterError(`(parley ${command.name()} --help shows its options)`);
    for (const sub of command.commands) sub.exitOverride().configureOutput(program.configureOutput()).showHelpAfterError(`(parley ${command.name()} ${sub.name()} --help shows its options)`);
  }
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version "errors" are the normal end of those flags; the message was already written.
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    io.stderr.write(`parley: ${describeError(err)}\n`);
    return EXIT.failed;
  }
  return outcome;
}
