import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callToolWebhook, MAX_TOOL_RESPONSE_BYTES, type EgressSend } from '../../calls/tool-call.ts';
import { toolWebhooksOf } from '../../calls/tools.ts';
import { readJson } from '../../db/values.ts';
import { EgressError } from '../../egress/client.ts';
import { Envelope, envelope, responses } from '../../http/envelope.ts';
import { badRequest, notFound } from '../../http/errors.ts';
import { Uuid } from '../../http/schemas.ts';
import { findAssistant, type Kind } from './assistants.repository.ts';
import type { StoredExtension } from './items.ts';

/** How much of a large answer is read so that its first 64 KiB can be shown (a call reads only 64 KiB). */
const SHOWN_READ_LIMIT = 1024 * 1024;

const TestBody = Type.Object(
  { parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'The arguments the LLM would choose; {} when absent' })) },
  { additionalProperties: false, title: 'ExtensionTestRequest', examples: [{ parameters: { orderNumber: 'A-17' } }] },
);

const TestResult = Type.Object(
  {
    ok: Type.Boolean({ description: 'true when a call would give the LLM this body' }),
    statusCode: Type.Union([Type.Integer(), Type.Null()], { description: 'null when no HTTP answer came' }),
    latencyMs: Type.Integer(),
    outcome: Type.String({ description: 'As in call records: ok, http_error, timeout, refused, too_large, unreachable…' }),
    body: Type.Union([Type.String(), Type.Null()], { description: 'The response body as text, cut at 64 KiB; null when no answer came' }),
  },
  { title: 'ExtensionTestResult' },
);

/**
 * "Send test request": one tool webhook exactly as a call sends it (same code, same egress
 * policy, same headers and signing), with callId `test_<uuid>` and a websocket transport, so a
 * user sees what their tool server answers before a caller does. Registered once per kind,
 * under the organization scope.
 */
export const extensionTestRoutes: FastifyPluginAsyncTypebox<{ kind: Kind }> = async (app, { kind }) => {
  const plural = kind === 'agent' ? 'agents' : 'assistants';
  const idParam = `${kind}Id`;
  const Params = Type.Object({ vendorId: Uuid, organizationId: Uuid, [idParam]: Uuid, extensionId: Uuid });
  const { db, clock, secrets, egress } = app.ctx;

  app.post(`/${plural}/:${idParam}/extensions/:extensionId/test`, {
    config: { auth: { scope: 'organization', permission: `${plural}:write` } },
    schema: {
      tags: [kind === 'agent' ? 'Agents' : 'Assistants'],
      operationId: kind === 'agent' ? 'testAgentExtension' : 'testAssistantExtension',
      summary: 'Send a test request to a tool_webhook extension',
      description: 'Sends the tool webhook a call would send (callId test_<uuid>, transport websocket) through the egress policy, ' +
        'and answers its status, latency, outcome and body (cut at 64 KiB). Stores nothing.',
      params: Params, body: TestBody, response: responses(200, Envelope(TestResult)),
    },
  }, async (request, reply) => {
    const params = request.params as Record<string, string>;
    const row = await findAssistant(db.kysely, kind, params.organizationId ?? '', params[idParam] ?? '');
    if (!row) throw notFound(kind === 'agent' ? 'Agent' : 'Assistant');
    const extension = readJson<StoredExtension[]>(row.extensions).find((e) => e.id === params.extensionId);
    if (!extension) throw notFound('Extension');
    if (extension.type !== 'tool_webhook') {
      throw badRequest('Only tool_webhook extensions can be tested', [{ path: 'extensionId', message: `is a ${extension.type} extension` }]);
    }
    const [tool] = toolWebhooksOf([extension], secrets);

    // The call's own reading rules decide the outcome; this wrapper only keeps what came back to show it.
    let shown: string | null = null;
    const send: EgressSend = async (egressRequest) => {
      const response = await egress.request({ ...egressRequest, maxResponseBytes: SHOWN_READ_LIMIT });
      const bytes = Buffer.from(response.body, 'utf8');
      shown = bytes.length > MAX_TOOL_RESPONSE_BYTES ? bytes.subarray(0, MAX_TOOL_RESPONSE_BYTES).toString('utf8') : response.body;
      if (bytes.length > MAX_TOOL_RESPONSE_BYTES) throw new EgressError('too_large', 'response body over 64 KiB');
      return response;
    };
    const controller = new AbortController();
    // The user gave up (closed the page): stop waiting on their tool server too.
    reply.raw.once('close', () => controller.abort());
    const result = await callToolWebhook(send, tool, { id: 'test', name: extension.name, arguments: JSON.stringify(request.body.parameters ?? {}) }, {
      callId: `test_${randomUUID()}`, traceId: request.id, transport: { type: 'websocket' }, clock, signal: controller.signal,
    });
    return envelope(request, { ok: result.ok, statusCode: result.statusCode, latencyMs: result.latencyMs, outcome: result.outcome, body: shown });
  });
};
