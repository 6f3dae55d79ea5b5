import { WebSocket } from 'ws';
import { ConfigError } from '../../config.ts';
import type { OpenCallSocket } from '../../calls/testing/conversation.ts';
import { targetOf, type Organization, type Target } from '../../calls/testing/run.ts';
import { ParleyError } from '../api-client.ts';

/**
 * The assistant (or agent) of that name, at the version asked for (its configuration then: its
 * tool webhooks, its greeting). One that does not exist is a ConfigError (a usage error).
 */
export async function resolveTarget(org: Organization, kind: Target['kind'], name: string, version: number | null): Promise<Target> {
  let id: string | null = null;
  const items = kind === 'agent' ? org.paginate('listAgents') : org.paginate('listAssistants');
  for await (const item of items) {
    if (item.name === name) {
      id = item.id;
      break;
    }
  }
  if (!id) throw new ConfigError(`no ${kind} is named "${name}" in this organization`);
  if (version === null) {
    const current = kind === 'agent' ? await org.getAgent({ path: { agentId: id } }) : await org.getAssistant({ path: { assistantId: id } });
    return targetOf(kind, id, current);
  }
  try {
    const at = kind === 'agent'
      ? await org.getAgentVersion({ path: { agentId: id, version } })
      : await org.getAssistantVersion({ path: { assistantId: id, version } });
    return targetOf(kind, id, at.configuration);
  } catch (err) {
    if (err instanceof ParleyError && err.status === 404) throw new ConfigError(`the ${kind} "${name}" has no version ${version} (--version)`);
    throw err;
  }
}

/** The call socket of a test in Node: `ws`, its refusal's HTTP status said. */
export const openWsSocket: OpenCallSocket = (url, on) => {
  const socket = new WebSocket(url);
  socket.on('unexpected-response', (_request, response) => {
    on.error(`refused with HTTP ${response.statusCode}`);
    response.resume();
  });
  socket.on('error', (err) => on.error(err.message));
  socket.on('close', () => on.close());
  socket.on('message', (data, isBinary) => {
    if (!isBinary) on.message((data as Buffer).toString('utf8'));
  });
  return { send: (text) => socket.send(text), isOpen: () => socket.readyState === WebSocket.OPEN };
};
