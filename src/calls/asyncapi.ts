import type { TSchema } from 'typebox';
import { ClientFrames, ServerFrames } from './frames.ts';

/**
 * The call WebSocket as an AsyncAPI 3.0 document, generated from the frame schemas that also
 * type and validate the frames, so the reference cannot drift from the code. Served at
 * /asyncapi.json beside /openapi.json.
 */
export function asyncApiDocument(version: string): Record<string, unknown> {
  const message = (schema: TSchema & { title?: string; description?: string }) => ({
    name: schema.title,
    title: schema.title,
    summary: schema.description,
    contentType: 'application/json',
    payload: JSON.parse(JSON.stringify(schema)) as unknown,
  });
  const messages = (frames: Record<string, TSchema>, prefix: string) =>
    Object.fromEntries(Object.entries(frames).map(([type, schema]) => [`${prefix}_${type}`, message(schema)]));
  const client = messages(ClientFrames, 'client');
  const server = messages(ServerFrames, 'server');
  const refs = (all: Record<string, unknown>) => Object.keys(all).map((key) => ({ $ref: `#/channels/call/messages/${key}` }));
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Parley call WebSocket',
      version,
      description:
        'A call started with POST {org_path}/assistants/{assistantId}/calls (or agents/{agentId}/calls) answers a ' +
        'websocketUrl whose token works once, for 60 seconds. Frames are JSON text; a voice call (started with `audio`) ' +
        'also carries binary audio frames of its format both ways. The HTTP API is described at /openapi.json.',
    },
    channels: {
      call: {
        address: '/api/v1/calls/{callId}/ws',
        parameters: { callId: { description: 'The id answered by the start route' } },
        messages: { ...client, ...server },
        bindings: { ws: { query: { type: 'object', properties: { token: { type: 'string', description: 'The one-time call token of websocketUrl' } }, required: ['token'] } } },
      },
    },
    operations: {
      sendClientFrame: { action: 'receive', channel: { $ref: '#/channels/call' }, summary: 'What a client sends (Parley receives)', messages: refs(client) },
      receiveServerFrame: { action: 'send', channel: { $ref: '#/channels/call' }, summary: 'What Parley sends to the client', messages: refs(server) },
    },
  };
}
