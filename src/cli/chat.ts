import { Command } from 'commander';
import { ConfigError, loadClientConfig } from '../config.ts';
import { createApiClient } from './api-client.ts';
import { id } from './arguments.ts';
import { converse } from './conversation.ts';
import type { CliIo, Outcome } from './io.ts';
import { findTarget } from './organization.ts';

interface ChatOptions {
  url?: string;
  token?: string;
  vendor?: string;
  organization?: string;
}

/** Ends that are the call's own doing, not a failure of the service or the LLM. */
const FAILED = new Set(['error', 'server_shutdown', 'server_lost', 'disconnected']);
/** A second Ctrl-C left without waiting for the call's end: the shell's code for SIGINT. */
const EXIT_INTERRUPTED = 130;

/** Ctrl-C with the input piped arrives as SIGINT: it hangs up instead of killing the process mid-call. */
function onInterrupt(handler: () => void): () => void {
  process.on('SIGINT', handler);
  return () => void process.off('SIGINT', handler);
}

/**
 * `parley chat <id>`: starts a WebSocket call with an assistant (or an agent) and holds a text
 * conversation in the terminal, or with lines piped in. Ends with the call id and where its
 * record is.
 */
export function chatCommand(io: CliIo, done: (outcome: Outcome) => void): Command {
  return new Command('chat')
    .summary('talk to an assistant or an agent in the terminal (text)')
    .description('Start a WebSocket call with an assistant or an agent and talk to it in text: tool calls and their results show as they happen.\nType /end (or Ctrl-D) to hang up after the answer in progress, Ctrl-C to hang up at once (exit 0; a second Ctrl-C leaves without waiting, exit 130); the call id and its record\'s URL are printed at the end.\nLines may be piped in: the first is sent after the greeting, each next one once the answer to the one before is done, and the end of the input hangs up (exit 0).\nVoice is not offered here: start the call with "audio" through the API (docs/calls.md).')
    .argument('<id>', 'the assistant\'s or agent\'s id', id)
    .option('--url <url>', 'the Parley service (env: PARLEY_URL; default http://127.0.0.1:$PORT, else 8080)')
    .option('--token <token>', 'an API token with calls:write (env: PARLEY_TOKEN)')
    .option('--vendor <id>', 'the vendor of the organization (env: PARLEY_VENDOR)', id)
    .option('--organization <id>', 'the organization of the assistant (env: PARLEY_ORGANIZATION); found by looking when the token may list it', id)
    .addHelpText('after', '\nExample:\n  eval "$(parley setup)"   # PARLEY_URL, PARLEY_TOKEN, PARLEY_VENDOR, PARLEY_ORGANIZATION\n  parley chat 0b6f1c1e-7a55-4f0e-9a34-2f1e4c3b9d10\n  printf \'Where is order A-17?\\n/end\\n\' | parley chat 0b6f1c1e-7a55-4f0e-9a34-2f1e4c3b9d10')
    .action(async (target: string, options: ChatOptions) => {
      const client = loadClientConfig(io.env);
      const token = options.token ?? client.token;
      if (!token) throw new ConfigError('parley chat needs an API token with calls:write: set PARLEY_TOKEN or pass --token (parley setup makes one)');
      const api = createApiClient((options.url ?? client.url).replace(/\/+$/, ''), token);
      const found = await findTarget(api, target, { vendor: options.vendor ?? client.vendor, organization: options.organization ?? client.organization });
      const orgPath = `/api/v1/vendors/${found.vendorId}/organizations/${found.organizationId}`;
      const org = api.parley.organization(found.vendorId, found.organizationId);
      const call = found.kind === 'agent'
        ? await org.startAgentCall({ path: { agentId: found.id }, body: {} })
        : await org.startAssistantCall({ path: { assistantId: found.id }, body: {} });
      const interactive = io.stdin.isTTY === true;
      io.stdout.write(`Calling ${found.kind} "${found.name}" (call ${call.id}).${interactive ? ' Type /end or press Ctrl-D to hang up after the answer, Ctrl-C at once.' : ''}\n`);
      const end = await converse(call.websocketUrl, { input: io.stdin, output: io.stdout, interactive, onInterrupt });
      io.stdout.write(`call id: ${call.id}\nrecord:  ${api.baseUrl}${orgPath}/calls/${call.id}\n`);
      done(end.reason === 'interrupted' ? EXIT_INTERRUPTED : FAILED.has(end.reason) ? 1 : 0);
    });
}
