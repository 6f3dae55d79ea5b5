import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Envelope, envelope, responses } from '../../http/envelope.ts';
import { conflict, notFound } from '../../http/errors.ts';
import { OrgParams, Uuid } from '../../http/schemas.ts';
import { toConclusion } from '../calls/calls.repository.ts';
import { CallParams, Conclusion } from '../calls/calls.schemas.ts';
import { analysisDue, analysisSettingOf } from './analysis.schedule.ts';

const tags = ['Calls'];

/**
 * The analysis of a call on demand (`POST …/calls/{callId}/analysis`, for example after the
 * plan changed: it runs again with the assistant's analysis as it is now, whatever the turns),
 * and a conclusion by its id (what an agent task's conclusionId names).
 */
export const analysisRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { kysely } = app.ctx.db;

  app.post('/calls/:callId/analysis', {
    config: { auth: { scope: 'organization', permission: 'calls:write' } },
    schema: {
      tags, operationId: 'analyzeCall', summary: "Run a call's analysis (again)",
      description: 'Queues the analysis of an ended call with its assistant\'s current analysis setting; the conclusion shows analysisStatus pending until ' +
        'it is done, and call_analyzed is sent then. 409 while the call runs, while an analysis of it is running, or when its assistant asks for none.',
      params: CallParams, response: responses(200, Envelope(Conclusion), [409]),
    },
  }, async (request) => {
    const { organizationId, callId } = request.params;
    const call = await kysely.selectFrom('calls').selectAll().where('organization_id', '=', organizationId).where('id', '=', callId).executeTakeFirst();
    if (!call) throw notFound('Call');
    if (call.status !== 'ended' || !call.conclusion_id) throw conflict('The call has not ended yet; it is analysed when it ends');
    const current = await analysisSettingOf(kysely, { ...call, assistant_version: null });
    if (!current?.setting) throw conflict('Its assistant or agent asks for no analysis: set its analysis first');
    const queued = await kysely.updateTable('conclusions').set(analysisDue(app.ctx.clock.now()))
      .where('id', '=', call.conclusion_id).where('analysis_lease_owner', 'is', null).executeTakeFirst();
    if (Number(queued.numUpdatedRows) !== 1) throw conflict('An analysis of this call is running; wait for call_analyzed');
    const row = await kysely.selectFrom('conclusions').selectAll().where('id', '=', call.conclusion_id).executeTakeFirstOrThrow();
    return envelope(request, toConclusion(row));
  });

  app.get('/conclusions/:conclusionId', {
    config: { auth: { scope: 'organization', permission: 'calls:read' } },
    schema: {
      tags, operationId: 'getConclusion', summary: 'Get a conclusion: how a call ended, and what its analysis found',
      description: "An agent task's conclusionId names one; callId leads to the whole call (GET …/calls/{callId}).",
      params: Type.Object({ ...OrgParams.properties, conclusionId: Uuid }), response: responses(200, Envelope(Conclusion)),
    },
  }, async (request) => {
    const row = await kysely.selectFrom('conclusions').selectAll()
      .where('organization_id', '=', request.params.organizationId).where('id', '=', request.params.conclusionId).executeTakeFirst();
    if (!row) throw notFound('Conclusion');
    return envelope(request, toConclusion(row));
  });
};
