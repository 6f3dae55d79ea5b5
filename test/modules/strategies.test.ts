import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { strategyBody } from '../helpers/fixtures.ts';

for (const dialect of DIALECTS) {
  describe(`LLM generation strategies (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    let url: string;
    before(async () => {
      t = await buildTestApp(dialect);
      a = await createTenant(t);
      url = `${a.orgPath}/llm-generation-strategies`;
    });
    after(() => t.close());

    it('creates, reads, replaces and deletes with nested voice and vad parameters', async () => {
      const created = await t.call('POST', url, { body: strategyBody });
      assert.equal(created.statusCode, 201);
      const data = created.json().data;
      assert.equal(data.organizationId, a.organizationId);
      assert.deepEqual(data.parameters, strategyBody.parameters);
      const location = created.headers.location as string;
      assert.deepEqual((await t.call('GET', location)).json().data, data);
      const replaced = { name: 'Realtime', type: 'speech_to_speech', parameters: { temperature: 1.2, voice: { provider: 'openai', voiceId: 'alloy' } } };
      assert.equal((await t.call('PUT', location, { body: replaced })).statusCode, 200);
      const read = (await t.call('GET', location)).json().data;
      assert.equal(read.type, 'speech_to_speech');
      assert.deepEqual(read.parameters, replaced.parameters);
      const withFallbacks = {
        name: 'Own LLM', type: 'text_to_speech',
        parameters: {
          llm: { provider: 'anthropic', model: 'claude-sonnet-4-5' },
          fallbacks: { llm: [{ provider: 'openai_compatible', model: 'llama-3.3-70b' }], stt: [{ provider: 'openai' }], tts: [{ provider: 'deepgram', voiceId: 'aura-2-thalia-en' }] },
        },
      };
      assert.equal((await t.call('PUT', location, { body: withFallbacks })).statusCode, 200);
      assert.deepEqual((await t.call('GET', location)).json().data.parameters, withFallbacks.parameters);
      assert.equal((await t.call('DELETE', location)).statusCode, 200);
      assert.equal((await t.call('GET', location)).statusCode, 404);
    });

    it('rejects values outside the ranges of the contract, naming the field', async () => {
      const bad: [Record<string, unknown>, string][] = [
        [{ temperature: 2.5 }, 'parameters.temperature'],
        [{ temperature: -0.1 }, 'parameters.temperature'],
        [{ outputSampleRate: 12345 }, 'parameters.outputSampleRate'],
        [{ voice: { speed: 4.5 } }, 'parameters.voice.speed'],
        [{ voice: { stability: 1.5 } }, 'parameters.voice.stability'],
        [{ voice: { provider: 'acme-tts' } }, 'parameters.voice.provider'],
        [{ vad: { stopDuration: 11 } }, 'parameters.vad.stopDuration'],
        [{ vad: { minVolume: -1 } }, 'parameters.vad.minVolume'],
        [{ vad: { loudness: 1 } }, 'parameters.vad.loudness'],
        [{ colour: 'blue' }, 'parameters.colour'],
        [{ llm: { provider: 'acme-llm', model: 'm' } }, 'parameters.llm.provider'],
        [{ llm: { provider: 'elevenlabs', model: 'm' } }, 'parameters.llm.provider'],
        [{ llm: { provider: 'anthropic' } }, 'parameters.llm.model'],
        [{ fallbacks: { llm: [] } }, 'parameters.fallbacks.llm'],
        [{ fallbacks: { llm: Array.from({ length: 4 }, () => ({ provider: 'anthropic', model: 'm' })) } }, 'parameters.fallbacks.llm'],
        [{ fallbacks: { tts: [{ voiceId: 'Rachel' }] } }, 'parameters.fallbacks.tts[0].provider'],
        [{ fallbacks: { stt: [{ provider: 'cartesia' }] } }, 'parameters.fallbacks.stt[0].provider'],
        [{ fallbacks: { realtime: [] } }, 'parameters.fallbacks.realtime'],
      ];
      for (const [parameters, path] of bad) {
        const res = await t.call('POST', url, { body: { name: 'x', type: 'text_to_speech', parameters } });
        assert.equal(res.statusCode, 400, JSON.stringify(parameters));
        assert.ok(res.json().error.details.some((d: { path: string }) => d.path === path), `${path}: ${res.body}`);
      }
      // An unknown provider's 400 lists the ones there are, the registry's LLMs.
      const unknown = await t.call('POST', url, { body: { name: 'x', type: 'text_to_speech', parameters: { llm: { provider: 'acme-llm', model: 'm' } } } });
      assert.match(JSON.stringify(unknown.json().error.details), /openai.*openai_compatible.*anthropic/);
      const badType = await t.call('POST', url, { body: { name: 'x', type: 'telepathy', parameters: {} } });
      assert.equal(badType.statusCode, 400);
      assert.equal((await t.call('GET', url)).json().totalElements, 0, 'nothing was created');
    });

    it('404 for a strategy of another organization or none', async () => {
      const other = await createTenant(t, 'Other');
      const created = await t.call('POST', `${other.orgPath}/llm-generation-strategies`, { body: strategyBody });
      const id = created.json().data.id;
      assert.equal((await t.call('GET', `${url}/${id}`)).statusCode, 404);
      assert.equal((await t.call('PUT', `${url}/${id}`, { body: strategyBody })).statusCode, 404);
      assert.equal((await t.call('DELETE', `${url}/${id}`)).statusCode, 404);
      assert.equal((await t.call('GET', `${other.orgPath}/llm-generation-strategies/${id}`)).statusCode, 200, 'still there');
    });

    it('409 when deleting a strategy that an assistant or agent uses', async () => {
      for (const plural of ['assistants', 'agents']) {
        const strategy = await t.call('POST', url, { body: strategyBody });
        const id = strategy.json().data.id;
        const bot = await t.call('POST', `${a.orgPath}/${plural}`, { body: { name: 'Uses it', llmAudioContentGenerationStrategyId: id } });
        assert.equal(bot.statusCode, 201);
        const res = await t.call('DELETE', `${url}/${id}`);
        assert.equal(res.statusCode, 409);
        assert.equal(res.json().error.code, 'CONFLICT');
        await t.call('DELETE', bot.headers.location as string);
        assert.equal((await t.call('DELETE', `${url}/${id}`)).statusCode, 200);
      }
    });

    it('lists with pagination and sorting by name and type', async () => {
      const s = await createTenant(t, 'Sorted');
      const surl = `${s.orgPath}/llm-generation-strategies`;
      for (const [name, type] of [['c', 'text_to_speech'], ['a', 'speech_to_speech'], ['b', 'text_to_speech']]) {
        await t.call('POST', surl, { body: { name, type, parameters: {} } });
      }
      const byName = (await t.call('GET', `${surl}?size=2`)).json();
      assert.deepEqual(byName.data.map((x: { name: string }) => x.name), ['a', 'b']);
      assert.equal(byName.totalElements, 3);
      assert.equal(byName.totalPages, 2);
      const byType = (await t.call('GET', `${surl}?sort=type,desc&sort=name,desc`)).json();
      assert.deepEqual(byType.data.map((x: { name: string }) => x.name), ['c', 'b', 'a']);
    });
  });
}
