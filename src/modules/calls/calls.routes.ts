import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { TWILIO_AUDIO } from '../../calls/transports/twilio.ts';
import { websocketTransportInfo } from '../../calls/transports/websocket.ts';
import { Envelope, PageEnvelope, envelope, responses, sendCreated } from '../../http/envelope.ts';
import { badRequest, forbidden, notFound } from '../../http/errors.ts';
import { listQuery, pageBody } from '../../http/pagination.ts';
import { websocketBase } from '../../http/public-url.ts';
import { OrgParams, Uuid, orgPath } from '../../http/schemas.ts';
import type { Kind } from '../assistants/assistants.repository.ts';
import { CALL_SORT, findCall, listCalls } from './calls.repository.ts';
import { Call, CallFilters, CallParams, CallStart, CallStarted, type CallStatus } from './calls.schemas.ts';
import { createCall, type CallDeps } from './calls.service.ts';
import { mediaStreamPath } from './media-stream.socket.ts';

const tags = ['Calls'];
const ListQuery = listQuery(CALL_SORT, CallFilters, 'createdAt,desc');

/** A call for Twilio Media Streams is mu-law at 8 kHz: any other audio asked with it is a 400. */
function audioFor(body: CallStart): CallStart['audio'] | null {
  if (body.protocol !== 'twilio') return body.audio ?? null;
  const { audio } = body;
  if (audio && (audio.encoding !== TWILIO_AUDIO.encoding || audio.sampleRate !== TWILIO_AUDIO.sampleRate)) {
    throw badRequest('Twilio Media Streams carry mu-law at 8000 Hz', [{ path: 'audio', message: 'must be left out, or be { "encoding": "mulaw", "sampleRate": 8000 }, with protocol twilio' }]);
  }
  return { encoding: TWILIO_AUDIO.encoding, sampleRate: TWILIO_AUDIO.sampleRate };
}

/**
 * A call whose client answers its tools (a test's mocks) makes the assistant say what the client
 * wants its tools to have said: only a token that may change the assistant may start one.
 */
function checkClientTools(request: FastifyRequest, body: CallStart, kind: Kind): void {
  if (!body.clientTools) return;
  if (body.protocol === 'twilio') throw badRequest('A Twilio Media Streams call cannot answer tools', [{ path: 'clientTools', message: 'cannot be used with protocol twilio' }]);
  const permission = `${kind === 'agent' ? 'agents' : 'assistants'}:write` as const;
  const { principal } = request;
  if (principal?.kind === 'token' && !principal.permissions.has(permission)) throw forbidden(`Missing permission ${permission} (clientTools answers the ${kind}'s tools)`);
}

export interface CallStartOptions {
  kind: Kind;
  deps: CallDeps;
}

/**
 * Starting a call on an assistant or an agent: one plugin, registered once per kind. Like
 * every create it takes Idempotency-Key; the answer carries the token, so the kept replay is
 * sealed (as for API tokens), and a replay after the token was used gives a URL that is refused.
 * A call nobody connects to ends as not_connected (the calls sweep).
 */
export const callStartRoutes: FastifyPluginAsyncTypebox<CallStartOptions> = async (app, { kind, deps }) => {
  const plural = kind === 'agent' ? 'agents' : 'assistants';
  const idParam = `${kind}Id`;
  const Params = Type.Object({ vendorId: Uuid, organizationId: Uuid, [idParam]: Uuid });

  app.post(`/${plural}/:${idParam}/calls`, {
    config: { auth: { scope: 'organization', permission: 'calls:write' }, idempotent: 'sealed' },
    schema: {
      tags, operationId: kind === 'agent' ? 'startAgentCall' : 'startAssistantCall', summary: `Start a WebSocket call with ${kind === 'agent' ? 'an agent' : 'an assistant'}`,
      description: 'Answers the call id and a websocketUrl whose single-use token works for 60 s. See docs/calls.md for the frames, ' +
        'and docs/twilio.md for protocol twilio (a Twilio Media Streams URL for any trunk that speaks it). ' +
        'At most PARLEY_MAX_CALLS_PER_ORGANIZATION calls of an organization ring or run at once (409 past it).',
      params: Params, body: CallStart, response: responses(201, Envelope(CallStarted), [409]),
    },
  }, async (request, reply) => {
    const params = request.params as Record<string, string>;
    const organizationId = params.organizationId ?? '';
    checkClientTools(request, request.body, kind);
    const call = await createCall(deps, {
      kind, organizationId, sourceId: params[idParam] ?? '', userValues: request.body.userValues ?? {}, version: request.body.version ?? null,
      traceId: request.id, transport: websocketTransportInfo(request.body.clientTools === true), audio: audioFor(request.body),
    });
    const path = request.body.protocol === 'twilio' ? mediaStreamPath(call.id, call.token) : `/api/v1/calls/${call.id}/ws?token=${call.token}`;
    const websocketUrl = `${websocketBase(deps.ctx.config.publicUrl, request)}${path}`;
    const location = `${orgPath({ vendorId: params.vendorId ?? '', organizationId })}/calls/${call.id}`;
    return sendCreated(request, reply, location, { id: call.id, websocketUrl, expiresAt: call.expiresAt });
  });
};

/** Call records: list (filter by assistant, agent, status) and get. */
export const callRecordRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { kysely } = app.ctx.db;
  const read = { auth: { scope: 'organization', permission: 'calls:read' } } as const;

  app.get('/calls', {
    config: read,
    schema: { tags, operationId: 'listCalls', summary: 'List calls (filter by assistantId, agentId, status, success)', params: OrgParams, querystring: ListQuery, response: responses(200, PageEnvelope(Call)) },
  }, async (request) => {
    const { assistantId, agentId, status, success, ...page } = request.query;
    if (assistantId && agentId) throw badRequest('Filter by assistantId or by agentId, not both', [{ path: 'agentId', message: 'cannot be combined with assistantId' }]);
    const source = assistantId ? { kind: 'assistant' as const, sourceId: assistantId } : agentId ? { kind: 'agent' as const, sourceId: agentId } : null;
    return pageBody(request, await listCalls(kysely, request.params.organizationId, source, status as CallStatus | undefined, page, success));
  });

  app.get('/calls/:callId', {
    config: read,
    schema: { tags, operationId: 'getCall', summary: 'Get a call: status, transcript, tool invocations, turn latencies and conclusion', params: CallParams, response: responses(200, Envelope(Call)) },
  }, async (request) => {
    const call = await findCall(kysely, request.params.organizationId, request.params.callId);
    if (!call) throw notFound('Call');
    return envelope(request, call);
  });
};
