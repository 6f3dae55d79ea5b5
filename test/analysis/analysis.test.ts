import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { DIALECTS } from '../helpers/dialects.ts';
import { until } from '../helpers/until.ts';
import { createTenant } from '../helpers/app.ts';
import { startReceiver, type Receiver } from '../calls/support/receiver.ts';
import { connect } from '../calls/support/client.ts';
import { callRecord, startWorld, type World } from '../calls/support/world.ts';
import { startLlmServer, type LlmServer, type Reply } from '../calls/support/llm-server.ts';

const HOOK_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OWN_KEY = 'sk-own-organization-llm-0123456789';
const SCHEMA = {
  type: 'object',
  properties: { appointmentBooked: { type: 'boolean' }, day: { type: 'string', enum: ['monday', 'tuesday'] } },
  required: ['appointmentBooked', 'day'],
  additionalProperties: false,
};
const ANALYSIS = {
  summary: { prompt: 'Summarise the call for {{agentName}} in one sentence.' },
  structuredData: { schema: SCHEMA },
  successEvaluation: { rubric: 'pass_fail', prompt: 'Did the caller book an appointment?' },
  minTurns: 2,
};

/** Which part of an analysis a request to the LLM asks for (null: the call's own conversation). */
function partOf(body: any): 'summary' | 'data' | 'data_retry' | 'success' | null {
  if (!String(body.messages[0]?.content ?? '').startsWith('You analyse a finished phone call')) return null;
  const last = String(body.messages.at(-1).content);
  if (last.includes('does not satisfy the schema')) return 'data_retry';
  if (last.includes('JSON Schema')) return 'data';
  if (last.includes('Answer with one word: true')) return 'success';
  return 'summary';
}

for (const dialect of DIALECTS) {
  describe(`the analysis of a call fills its conclusion (${dialect})`, () => {
    let w: World;
    let hooks: Receiver;
    /** An organization's own OpenAI-compatible LLM, beside the platform's (w.llm). */
    let own: LlmServer;
    const clock = { offsetMs: 0, now: () => new Date(Date.now() + clock.offsetMs) };
    let assistantId: string;
    /** What the fake LLM answers each part with, for the next analysis. */
    let answers: Record<string, Reply | Reply[]> = {};
    const asked: { part: string; body: any }[] = [];

    before(async () => {
      hooks = await startReceiver();
      own = await startLlmServer();
      w = await startWorld(dialect, {}, { clock });
      w.llm.respond = (body) => {
        const part = partOf(body);
        if (!part) return { text: 'Certainly.' };
        asked.push({ part, body });
        const scripted = answers[part === 'data_retry' ? 'data' : part];
        return (Array.isArray(scripted) ? scripted.shift() : scripted) ?? { text: 'no answer scripted' };
      };
      assistantId = await w.createAssistant({
        name: 'Bookings', systemPrompt: 'You book appointments for {{agentName}}.', analysis: ANALYSIS,
        callEventHooks: [{ type: 'call_analyzed', parameters: { url: hooks.url, secret: HOOK_SECRET } }],
      });
    });
    after(async () => {
      await w.close();
      await hooks.close();
      await own.close();
    });

    /** A text call in which the caller says each of `lines`, then hangs up; answers its id. */
    async function converse(lines: string[], assistant = assistantId): Promise<string> {
      const { id, client } = await w.open(assistant, { agentName: 'Dr Lee' });
      for (const text of lines) {
        client.send({ type: 'user_message', text });
        await client.next('turn_done', 10_000);
      }
      client.send({ type: 'end' });
      await client.closed;
      return id;
    }

    /** Runs due jobs until the call's analysis has settled (done or failed) or is waiting to be retried. */
    async function settle(callId: string, wanted: (c: any) => boolean = (c) => c.conclusion?.analysisStatus !== 'pending'): Promise<any> {
      return until('the analysis', async () => {
        await w.t.app.runner.tick();
        await w.t.app.runner.idle();
        return callRecord(w, callId);
      }, wanted, 20_000);
    }

    it('a schema Ajv rejects is a 400 naming where; nothing is saved', async () => {
      const bad = await w.api('POST', `${w.tenant.orgPath}/assistants`, { name: 'Bad', analysis: { structuredData: { schema: { type: 'object', properties: { a: { type: 'nonsense' } } } } } });
      assert.equal(bad.status, 400, JSON.stringify(bad.body));
      assert.match(bad.body.error.details[0].path, /^analysis\.structuredData\.schema\.properties\.a\.type/);
      assert.match(bad.body.error.details[0].message, /not a valid JSON Schema/);
      const ref = await w.api('PATCH', `${w.tenant.orgPath}/assistants/${assistantId}`, { analysis: { structuredData: { schema: { $ref: '#/definitions/missing' } } } });
      assert.equal(ref.status, 400, JSON.stringify(ref.body));
      assert.equal(ref.body.error.details[0].path, 'analysis.structuredData.schema');
      const rubric = await w.api('PATCH', `${w.tenant.orgPath}/assistants/${assistantId}`, { analysis: { successEvaluation: { rubric: 'stars' } } });
      assert.equal(rubric.status, 400);
      assert.match(JSON.stringify(rubric.body.error.details), /pass_fail/);
      const read = await w.api('GET', `${w.tenant.orgPath}/assistants/${assistantId}`);
      assert.deepEqual(read.body.data.analysis, ANALYSIS);
      assert.deepEqual(read.body.data.recording, { enabled: false });
    });

    it('fills summary, schema-valid data and success; call_analyzed is delivered signed; the list filters by success', { timeout: 60_000 }, async () => {
      answers = {
        summary: { text: 'The caller booked Monday with Dr Lee.' },
        data: { text: '```json\n{"appointmentBooked": true, "day": "monday"}\n```' },
        success: { text: 'true' },
      };
      const callId = await converse(['I would like an appointment.', 'Monday works for me.']);
      const call = await settle(callId);
      const { conclusion } = call;
      assert.equal(conclusion.summary, 'The caller booked Monday with Dr Lee.');
      assert.deepEqual(conclusion.data, { appointmentBooked: true, day: 'monday' });
      assert.equal(conclusion.dataError, null);
      assert.equal(conclusion.success, true);
      assert.equal(conclusion.analysisStatus, 'done');
      assert.ok(conclusion.analyzedAt);
      // The transcript went to the LLM, with the prompt's placeholder filled.
      const summary = asked.find((a) => a.part === 'summary')!.body;
      assert.match(summary.messages[1].content, /Caller: Monday works for me\./);
      assert.match(summary.messages[1].content, /Summarise the call for Dr Lee in one sentence\./);
      assert.match(summary.messages[1].content, /You book appointments for Dr Lee\./);
      assert.equal(summary.model, 'test-model');
      assert.equal(summary.temperature, 0);

      const byId = await w.api('GET', `${w.tenant.orgPath}/conclusions/${conclusion.id}`);
      assert.equal(byId.status, 200);
      assert.deepEqual(byId.body.data, conclusion);

      const delivered = await until('call_analyzed', async () => {
        await w.t.app.runner.tick();
        return hooks.requests.find((r) => r.body?.data?.callId === callId);
      }, Boolean, 20_000);
      const event = new Webhook(HOOK_SECRET).verify(delivered!.rawBody, delivered!.headers as Record<string, string>) as any;
      assert.equal(event.type, 'call_analyzed');
      assert.deepEqual(event.data, {
        callId, conclusionId: conclusion.id, summary: conclusion.summary, data: conclusion.data, dataError: null, success: true, analyzedAt: conclusion.analyzedAt,
      });

      const passed = await w.api('GET', `${w.tenant.orgPath}/calls?success=true`);
      assert.deepEqual(passed.body.data.map((c: any) => c.id), [callId]);
      assert.equal(passed.body.totalElements, 1);
      assert.equal((await w.api('GET', `${w.tenant.orgPath}/calls?success=false`)).body.totalElements, 0);
      assert.equal((await w.api('GET', `${w.tenant.orgPath}/calls?success=true&status=active`)).body.totalElements, 0);
      assert.equal((await w.api('GET', `${w.tenant.orgPath}/calls?success=true&assistantId=${assistantId}`)).body.totalElements, 1);
      assert.equal((await w.api('GET', `${w.tenant.orgPath}/calls?success=maybe`)).status, 400);
    });

    it('an answer that breaks the schema is asked again once with the errors; twice broken is kept as dataError with the raw text', { timeout: 60_000 }, async () => {
      asked.length = 0;
      answers = {
        summary: { text: 'Booked.' }, success: { text: 'false' },
        data: [{ text: '{"appointmentBooked": "yes"}' }, { text: '{"appointmentBooked": true, "day": "tuesday"}' }],
      };
      const fixed = await settle(await converse(['Book me please.', 'Tuesday.']));
      assert.deepEqual(fixed.conclusion.data, { appointmentBooked: true, day: 'tuesday' });
      assert.equal(fixed.conclusion.success, false);
      const retry = asked.find((a) => a.part === 'data_retry')!.body.messages;
      assert.equal(retry.at(-2).content, '{"appointmentBooked": "yes"}', 'the broken answer is shown back');
      assert.match(retry.at(-1).content, /appointmentBooked: must be boolean/);
      assert.match(retry.at(-1).content, /must have required property 'day'/);

      asked.length = 0;
      answers = { summary: { text: 'Unclear.' }, success: { text: 'false' }, data: [{ text: 'no idea' }, { text: '{"day": "friday"}' }] };
      const broken = await settle(await converse(['Hello?', 'Never mind.']));
      assert.equal(broken.conclusion.data, null);
      assert.equal(broken.conclusion.dataError.raw, '{"day": "friday"}');
      assert.ok(broken.conclusion.dataError.errors.length >= 2, JSON.stringify(broken.conclusion.dataError));
      assert.equal(asked.filter((a) => a.part.startsWith('data')).length, 2, 'asked twice, not more');
      assert.equal((await w.api('GET', `${w.tenant.orgPath}/calls?success=false`)).body.totalElements, 2);
    });

    it('a failing LLM is retried with backoff; the call ended at once all the same', { timeout: 60_000 }, async () => {
      // The OpenAI client itself tries a 503 twice: the attempt fails when both do.
      answers = { summary: [{ status: 503, errorMessage: 'overloaded' }, { status: 503, errorMessage: 'overloaded' }, { text: 'Second time lucky.' }], data: { text: '{"appointmentBooked": false, "day": "monday"}' }, success: { text: 'false' } };
      const callId = await converse(['Hi.', 'Bye.']);
      assert.equal((await callRecord(w, callId)).status, 'ended');
      const waiting = await settle(callId, (c) => c.conclusion?.analysisStatus === 'pending' && asked.some((a) => a.part === 'summary'));
      assert.equal(waiting.conclusion.summary, null);
      const row = await w.t.db.kysely.selectFrom('conclusions').select(['analysis_attempts', 'analysis_next_at', 'analysis_error']).where('id', '=', waiting.conclusion.id).executeTakeFirstOrThrow();
      assert.equal(row.analysis_attempts, 1);
      assert.match(String(row.analysis_error), /503/);
      assert.ok(Date.parse(String(row.analysis_next_at)) > clock.now().getTime() + 3_000, 'not before its backoff');
      await w.t.app.runner.tick();
      assert.equal((await callRecord(w, callId)).conclusion.analysisStatus, 'pending', 'nothing runs before the backoff');
      clock.offsetMs += 10_000;
      const done = await settle(callId);
      clock.offsetMs = 0;
      assert.equal(done.conclusion.summary, 'Second time lucky.');
      assert.equal(done.conclusion.analysisStatus, 'done');
    });

    it('a call with fewer caller turns than minTurns is not analysed; POST …/analysis runs it anyway, and again', { timeout: 60_000 }, async () => {
      answers = { summary: { text: 'Short call.' }, data: { text: '{"appointmentBooked": false, "day": "monday"}' }, success: { text: 'false' } };
      const callId = await converse(['Just one thing.']);
      const call = await callRecord(w, callId);
      await w.t.app.runner.tick();
      assert.equal(call.conclusion.analysisStatus, null);
      const queued = await w.api('POST', `${w.tenant.orgPath}/calls/${callId}/analysis`);
      assert.equal(queued.status, 200, JSON.stringify(queued.body));
      assert.equal(queued.body.data.analysisStatus, 'pending');
      assert.equal((await settle(callId)).conclusion.summary, 'Short call.');
      answers.summary = { text: 'Short call, read again.' };
      assert.equal((await w.api('POST', `${w.tenant.orgPath}/calls/${callId}/analysis`)).status, 200);
      assert.equal((await settle(callId)).conclusion.summary, 'Short call, read again.');

      // The plan changes after the call: a run asked for again follows the plan as it is now.
      const replanned = await w.createAssistant({ name: 'Replanned', systemPrompt: 'You book appointments.', analysis: ANALYSIS });
      answers = { summary: { text: 'Booked for Tuesday.' }, data: { text: '{"appointmentBooked": true, "day": "tuesday"}' }, success: { text: 'true' } };
      const planned = await converse(['I would like an appointment.', 'Tuesday, please.'], replanned);
      assert.equal((await settle(planned)).conclusion.summary, 'Booked for Tuesday.');
      assert.equal((await w.api('PATCH', `${w.tenant.orgPath}/assistants/${replanned}`, { analysis: { summary: { prompt: 'Say in three words what happened.' }, structuredData: null, successEvaluation: null } })).status, 200);
      const askedFrom = asked.length;
      answers.summary = { text: 'Appointment was booked.' };
      assert.equal((await w.api('POST', `${w.tenant.orgPath}/calls/${planned}/analysis`)).status, 200);
      assert.equal((await settle(planned)).conclusion.summary, 'Appointment was booked.');
      assert.deepEqual(asked.slice(askedFrom).map((a) => a.part), ['summary'], 'only what the new plan asks for');
      assert.match(JSON.stringify(asked.at(-1)?.body.messages), /three words/, 'with the new plan\'s prompt');

      const plain = await w.createAssistant({ name: 'Plain' });
      const unplanned = await converse(['a', 'b'], plain);
      const refused = await w.api('POST', `${w.tenant.orgPath}/calls/${unplanned}/analysis`);
      assert.equal(refused.status, 409);
      assert.match(refused.body.message, /no analysis/);
      assert.equal((await w.api('POST', `${w.tenant.orgPath}/calls/${crypto.randomUUID()}/analysis`)).status, 404);
      assert.equal((await w.api('GET', `${w.tenant.orgPath}/conclusions/${crypto.randomUUID()}`)).status, 404);
    });
    it('an organization whose strategy names its own LLM gets its analysis there, with its key, at the version the call ran; the platform\'s LLM gets nothing', { timeout: 60_000 }, async () => {
      const tenant = await createTenant(w.t, 'Own LLM org');
      const stored = await w.api('POST', `${tenant.orgPath}/provider-credentials`, { provider: 'openai_compatible', apiKey: OWN_KEY, baseUrl: own.baseUrl });
      assert.equal(stored.status, 201, JSON.stringify(stored.body));
      const strategy = await w.api('POST', `${tenant.orgPath}/llm-generation-strategies`, { name: 'Own', type: 'text_to_speech', parameters: { llm: { provider: 'openai_compatible', model: 'own-model' } } });
      assert.equal(strategy.status, 201, JSON.stringify(strategy.body));
      const assistant = await w.api('POST', `${tenant.orgPath}/assistants`, { name: 'Own', systemPrompt: 'You book appointments.', analysis: ANALYSIS, llmAudioContentGenerationStrategyId: strategy.body.data.id });
      assert.equal(assistant.status, 201, JSON.stringify(assistant.body));
      const ownAsked: string[] = [];
      own.respond = (body) => {
        const part = partOf(body);
        if (!part) return { text: 'Certainly.' };
        ownAsked.push(part);
        if (part === 'summary') return { text: 'Summarised by the organization\'s own LLM.' };
        return part === 'success' ? { text: 'true' } : { text: '{"appointmentBooked": true, "day": "tuesday"}' };
      };
      const platformFrom = w.llm.requests.length;
      const started = await w.api('POST', `${tenant.orgPath}/assistants/${assistant.body.data.id}/calls`, {});
      assert.equal(started.status, 201, JSON.stringify(started.body));
      const client = await connect(started.body.data.websocketUrl);
      await client.next('call_started');
      for (const text of ['I would like an appointment.', 'Tuesday, please.']) {
        client.send({ type: 'user_message', text });
        await client.next('turn_done', 10_000);
      }
      client.send({ type: 'end' });
      await client.closed;
      const callId = started.body.data.id as string;
      const read = async () => {
        await w.t.app.runner.tick();
        await w.t.app.runner.idle();
        return callRecord({ ...w, tenant }, callId);
      };
      const done = await until('the analysis', read, (c) => c.conclusion?.analysisStatus === 'done', 20_000);
      assert.equal(done.conclusion.summary, 'Summarised by the organization\'s own LLM.');
      assert.deepEqual(done.conclusion.data, { appointmentBooked: true, day: 'tuesday' });
      assert.equal(done.conclusion.success, true);
      assert.deepEqual(ownAsked, ['summary', 'data', 'success']);
      const analysed = own.requests.map((body, i) => ({ body, headers: own.headers[i]! })).filter((r) => partOf(r.body));
      assert.ok(analysed.every((r) => r.body.model === 'own-model' && r.body.temperature === 0), JSON.stringify(analysed.map((r) => [r.body.model, r.body.temperature])));
      assert.ok(analysed.every((r) => r.headers.authorization === `Bearer ${OWN_KEY}`), 'the organization\'s key');
      assert.deepEqual(w.llm.requests.slice(platformFrom), [], 'the platform\'s LLM served neither the call nor its analysis');

      // The assistant moves to a strategy naming no LLM (the platform's): the call ran the version before, so its analysis stays with its own.
      const platformStrategy = await w.api('POST', `${tenant.orgPath}/llm-generation-strategies`, { name: 'Platform', type: 'text_to_speech', parameters: { model: 'test-model' } });
      assert.equal((await w.api('PATCH', `${tenant.orgPath}/assistants/${assistant.body.data.id}`, { llmAudioContentGenerationStrategyId: platformStrategy.body.data.id })).status, 200);
      const ownFrom = own.requests.length;
      assert.equal((await w.api('POST', `${tenant.orgPath}/calls/${callId}/analysis`)).status, 200);
      await until('the analysis again', read, (c) => c.conclusion?.analysisStatus === 'done', 20_000);
      assert.equal(own.requests.length - ownFrom, 3, 'asked of its own LLM again');
      assert.deepEqual(w.llm.requests.slice(platformFrom), []);
    });
  });
}
