import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { TWILIO_AUDIO } from '../../calls/transports/twilio.ts';
import { websocketTransportInfo } from '../../calls/transports/websocket.ts';
import { readCounter } from '../../db/counters.ts';
import { Envelope, PageEnvelope, envelope, responses, sendCreated } from '../../http/envelope.ts';
import { badRequest, notFound } from '../../http/errors.ts';
import { fetchPage, listQuery, pageBody } from '../../http/pagination.ts';
import { websocketBase } from '../../http/public-url.ts';
import { OrgParams, Uuid, orgPath } from '../../http/schemas.ts';
import type { Kind } from '../assistants/assistants.repository.ts';
import { callCounter, callsWithConclusion, loadLog, toCall } from './calls.repository.ts';
import { CALL_STATUSES, Call, CallParams, CallStart, CallStarted, type CallStatus } from './calls.schemas.ts';
import { createCall, type CallDeps } from './calls.service.ts';
import { mediaStreamPath } from './media-stream.socket.ts';

const tags = ['Calls'];
const SORT = { createdAt: 'created_at', updatedAt: 'updated_at' };
const ListQuery = listQuery(SORT, {
  assistantId: Type.Optional(Uuid), agentId: Type.Optional(Uuid), status: Type.Optional(Type.String({ enum: [...CALL_STATUSES] })),
}, 'createdAt,desc');

/** A call for Twilio Media Streams is mu-law at 8 kHz: any other audio asked with it is a 400. */
function audioFor(body: CallStart): CallStart['audio'] | null {
  if (body.protocol !== 'twilio') return body.audio ?? null;
  const { audio } = body;
  if (audio && (audio.encoding !== TWILIO_AUDIO.encoding || audio.sampleRate !== TWILIO_AUDIO.sampleRate)) {
    throw badRequest('Twilio Media Streams carry mu-law at 8000 Hz', [{ path: 'audio', message: 'must be left out, or be { "encoding": "mulaw", "sampleRate": 8000 }, with protocol twilio' }]);
  }
  return { encoding: TWILIO_AUDIO.encoding, sampleRate: TWILIO_AUDIO.sampleRate };
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
      tags, summary: `Start a WebSocket call with ${kind === 'agent' ? 'an agent' : 'an assistant'}`,
      description: 'Answers the call id and a websocketUrl whose single-use token works for 60 s. See docs/calls.md for the frames, ' +
        'and docs/twilio.md for protocol twilio (a Twilio Media Streams URL for any trunk that speaks it). ' +
        'At most PARLEY_MAX_CALLS_PER_ORGANIZATION calls of an organization ring or run at once (409 past it).',
      params: Params, body: CallStart, response: responses(201, Envelope(CallStarted), [409]),
    },
  }, async (request, reply) => {
    const params = request.params as Record<string, string>;
    const organizationId = params.organizationId ?? '';
    const call = await createCall(deps, {
      kind, organizationId, sourceId: params[idParam] ?? '', userValues: request.body.userValues ?? {},
      traceId: request.id, transport: websocketTransportInfo(), audio: audioFor(request.body),
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
    schema: { tags, summary: 'List calls (filter by assistantId, agentId, status)', params: OrgParams, querystring: ListQuery, response: responses(200, PageEnvelope(Call)) },
  }, async (request) => {
    const { organizationId } = request.params;
    const { assistantId, agentId, status, ...page } = request.query as typeof request.query & { assistantId?: string; agentId?: string; status?: CallStatus };
    if (assistantId && agentId) throw badRequest('Filter by assistantId or by agentId, not both', [{ path: 'agentId', message: 'cannot be combined with assistantId' }]);
    let query = callsWithConclusion(kysely, organizationId);
    const source = assistantId ? { kind: 'assistant' as const, sourceId: assistantId } : agentId ? { kind: 'agent' as const, sourceId: agentId } : null;
    if (source) query = query.where('calls.kind', '=', source.kind).where('calls.assistant_id', '=', source.sourceId);
    if (status) query = query.where('calls.status', '=', status);
    const counter = callCounter(organizationId, source, status);
    const result = await fetchPage(query, page, SORT, () => readCounter(kysely, counter), { table: 'calls' });
    const logs = await loadLog(kysely, result.items.map((r) => r.id));
    return pageBody(request, { ...result, items: result.items.map((row) => toCall(row, logs.get(row.id))) });
  });

  app.get('/calls/:callId', {
    config: read,
    schema: { tags, summary: 'Get a call: status, transcript, tool invocations, turn latencies and conclusion', params: CallParams, response: responses(200, Envelope(Call)) },
  }, async (request) => {
    const row = await callsWithConclusion(kysely, request.params.organizationId).where('calls.id', '=', request.params.callId).executeTakeFirst();
    if (!row) throw notFound('Call');
    const logs = await loadLog(kysely, [row.id]);
    return envelope(request, toCall(row, logs.get(row.id)));
  });
};
