import type { TSchema } from 'typebox';
import { ClientFrames, ServerFrames } from './frames.ts';
import { TwilioMessages, TwilioReplies } from './transports/twilio-messages.ts';

type Schema = TSchema & { title?: string; description?: string };

const jsonMessage = (name: string, schema: Schema) => ({
  name,
  title: schema.title ?? name,
  summary: schema.description,
  contentType: 'application/json',
  payload: JSON.parse(JSON.stringify(schema)) as unknown,
});

/** A voice call's binary frames: raw samples of the call's `audio` format, in a WebSocket binary message. */
const audioMessage = (direction: 'in' | 'out') => ({
  name: 'audio',
  title: direction === 'in' ? 'Audio from the caller' : 'Audio of the assistant',
  summary: direction === 'in'
    ? 'A binary frame of the caller\'s audio in the call\'s `audio` format (pcm_s16le or mulaw at its sampleRate), any length (20-100 ms is usual). Voice calls only.'
    : 'A binary frame of exactly 20 ms of the assistant\'s voice in the call\'s `audio` format, paced in real time with at most 100 ms sent ahead; on `interrupted`, drop what is buffered. Voice calls only.',
  contentType: 'application/octet-stream',
  payload: { type: 'string', format: 'binary', description: 'Mono samples, no header: 16-bit little-endian PCM, or G.711 mu-law bytes' },
});

const keyed = (prefix: string, entries: Record<string, Schema>, name: (key: string) => string = (key) => key) =>
  Object.fromEntries(Object.entries(entries).map(([key, schema]) => [`${prefix}_${key}`, jsonMessage(name(key), schema)]));

const refs = (channel: string, messages: Record<string, unknown>) => Object.keys(messages).map((key) => ({ $ref: `#/channels/${channel}/messages/${key}` }));

/**
 * The call's sockets as an AsyncAPI 3.0 document, generated from the schemas that also type and
 * validate their messages, so the reference cannot drift from the code: the call WebSocket (JSON
 * frames, and a voice call's binary audio) and the Twilio Media Streams socket. Served at
 * /asyncapi.json beside /openapi.json, with the server the request reached (asyncApiServers).
 */
export function asyncApiDocument(version: string): Record<string, unknown> {
  const client = { ...keyed('client', ClientFrames), client_audio: audioMessage('in') };
  const server = { ...keyed('server', ServerFrames), server_audio: audioMessage('out') };
  const fromTwilio = keyed('twilio', TwilioMessages);
  const toTwilio = keyed('parley', TwilioReplies);
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Parley call sockets',
      version,
      description:
        'A call started with POST {org_path}/assistants/{assistantId}/calls (or agents/{agentId}/calls) answers a ' +
        'websocketUrl whose token works once, for 60 seconds. On the call WebSocket frames are JSON text; a voice call ' +
        '(started with `audio`) also carries binary audio frames of its format both ways. A call started with ' +
        '`"protocol": "twilio"`, or by a Twilio number\'s voice webhook, speaks Twilio Media Streams on its media-stream ' +
        'socket instead. The HTTP API is described at /openapi.json.',
    },
    channels: {
      call: {
        address: '/api/v1/calls/{callId}/ws',
        parameters: { callId: { description: 'The id answered by the start route' } },
        messages: { ...client, ...server },
        bindings: { ws: { query: { type: 'object', properties: { token: { type: 'string', description: 'The one-time call token of websocketUrl' } }, required: ['token'] } } },
      },
      twilioMediaStream: {
        address: '/api/v1/calls/{callId}/media-stream/{token}',
        title: 'Twilio Media Streams',
        description: 'Bidirectional Twilio Media Streams (<Connect><Stream>): JSON text messages as Twilio publishes them (docs/twilio.md). ' +
          'The one-time token is in the path, since a Stream url takes no query string.',
        parameters: {
          callId: { description: 'The id of the call (from the voice webhook\'s TwiML, or the start route with protocol twilio)' },
          token: { description: 'The one-time call token' },
        },
        messages: { ...fromTwilio, ...toTwilio },
      },
    },
    operations: {
      sendClientFrame: { action: 'receive', channel: { $ref: '#/channels/call' }, summary: 'What a client sends (Parley receives)', messages: refs('call', client) },
      receiveServerFrame: { action: 'send', channel: { $ref: '#/channels/call' }, summary: 'What Parley sends to the client', messages: refs('call', server) },
      twilioSends: { action: 'receive', channel: { $ref: '#/channels/twilioMediaStream' }, summary: 'What Twilio (or another Media Streams trunk) sends', messages: refs('twilioMediaStream', fromTwilio) },
      parleySendsToTwilio: { action: 'send', channel: { $ref: '#/channels/twilioMediaStream' }, summary: 'What Parley sends to Twilio', messages: refs('twilioMediaStream', toTwilio) },
    },
  };
}

/** The `servers` of the document: where the sockets are, from the service's public WebSocket base URL. */
export function asyncApiServers(websocketBase: string): Record<string, unknown> {
  const url = new URL(websocketBase);
  const pathname = url.pathname.replace(/\/+$/, '');
  return {
    parley: {
      host: url.host,
      protocol: url.protocol.replace(/:$/, ''),
      ...(pathname ? { pathname } : {}),
      description: 'This Parley service (PARLEY_PUBLIC_URL, else the address the request reached)',
    },
  };
}
