import { Command } from 'commander';
import { PROVIDER_VARIABLES } from '../calls/providers/registry.ts';
import { CLIENT_SETTINGS, SETTINGS, type Setting } from '../config.ts';
import type { CliIo, Outcome } from './io.ts';

function list(settings: readonly Setting[]): string {
  return settings.map((s) => `  ${s.name}${s.default ? `  (default: ${s.default})` : ''}\n      ${s.description}`).join('\n');
}

/** Every variable the service reads: config.ts's table, the provider registry's keys and base URLs, then the client commands'. */
export function environmentHelp(): string {
  return [
    'The service (serve, worker, migrate, doctor, token create) reads:',
    '',
    list(SETTINGS),
    '',
    'and, for the providers of calls (keys for organizations without a provider credential of their own):',
    '',
    list(PROVIDER_VARIABLES.map((v) => ({ ...v, default: '' }))),
    '',
    'The client commands (setup, chat) read:',
    '',
    list(CLIENT_SETTINGS),
    '',
    'docs/configuration.md describes each of them.',
  ].join('\n');
}

export function environmentCommand(io: CliIo, done: (outcome: Outcome) => void): Command {
  return new Command('environment')
    .alias('env')
    .summary('list the environment variables Parley reads, with their defaults')
    .description('List every environment variable Parley reads, with its default and what it does.')
    .addHelpText('after', `\n${environmentHelp()}`)
    .action(() => {
      io.stdout.write(`${environmentHelp()}\n`);
      done(0);
    });
}
