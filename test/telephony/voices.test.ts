// Every TTS provider of the registry that is reached over the network speaks in a SIP call: a
// phone (baresip) calls a number of the organization straight from its trunk's address, and
// hears the greeting as the provider's fake made it, through G.711 and RTP. SQLite only, as the
// other baresip tests: the database plays no part in the media path.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readWav, segmentedCorrelation, writeWav } from '../helpers/audio.ts';
import { startBaresip } from '../helpers/baresip.ts';
import { until } from '../helpers/until.ts';
import { asHeardAt, SPEAKING_PROVIDERS, speakingStrategy, startTtsFakeOf } from '../calls/support/voices.ts';
import { startWorld, type World } from '../calls/support/world.ts';

const KEY = 'tts-provider-key-0123456789abcdef';
const GREETING = 'Hello, you have reached the front desk.';
const PHONE = '+12125550181';

describe('every TTS provider speaks in a SIP call (sqlite)', () => {
  let dir: string;
  let w: World;
  let sipPort: number;
  let silence: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parley-voices-'));
    silence = join(dir, 'silence.wav');
    await writeWav(silence, new Int16Array(8000 * 7));
    w = await startWorld('sqlite', { PARLEY_DIALER: 'sip', PARLEY_SIP_PORT: '0', PARLEY_SIP_HOST: '127.0.0.1', PARLEY_RTP_PORTS: '25200-25249' });
    sipPort = w.t.app.telephony!.endpoint.port;
  });
  after(async () => {
    await w?.close();
    await rm(dir, { recursive: true, force: true });
  });

  for (const [i, provider] of SPEAKING_PROVIDERS.entries()) {
    it(`${provider}: the phone hears the greeting as the provider made it`, { timeout: 90_000 }, async (t) => {
      const fake = await startTtsFakeOf(provider, KEY, 8000);
      const org = w.tenant.orgPath;
      const number = `+1212555017${i}`;
      const made: string[] = [];
      const create = async (path: string, body: unknown) => {
        const res = await w.api('POST', `${org}${path}`, body);
        assert.equal(res.status, 201, JSON.stringify(res.body));
        made.unshift(`${org}${path}/${res.body.data.id}`);
        return res.body.data.id as string;
      };
      const phone = await startBaresip({ user: PHONE, source: silence, rtpPorts: '25250-25299' });
      try {
        const trunk = await create('/sip/credentials', { name: `Trunk for ${provider}`, hostname: '127.0.0.1', username: provider, password: 'never-sent' });
        const numberId = await create('/sip/numbers', { number, sipCredentialId: trunk });
        const strategy = await speakingStrategy(w, org, provider, fake, KEY, 8000);
        const credential = (await w.api('GET', `${org}/provider-credentials?provider=${provider}`)).body.data[0].id;
        made.push(`${org}/llm-generation-strategies/${strategy}`, `${org}/provider-credentials/${credential}`);
        await create('/assistants', { name: `Speaks ${provider}`, systemPromptGreeting: GREETING, llmAudioContentGenerationStrategyId: strategy, telephoneNumberId: numberId });
        const dial = await phone.command('dial', `sip:${number}@127.0.0.1:${sipPort}`);
        assert.ok(dial.ok, dial.data);
        await phone.waitEvent('CALL_ESTABLISHED');
        // The phone hangs up when its file of silence ends; it heard the greeting as the fake made it.
        await phone.waitEvent('CALL_CLOSED', undefined, 30_000);
        const calls = () => w.t.ctx.db.kysely.selectFrom('calls').select(['status', 'providers']).where('organization_id', '=', w.tenant.organizationId).orderBy('created_at', 'desc').limit(1).executeTakeFirstOrThrow();
        const call = await until('the call ended', calls, (row) => row.status === 'ended');
        assert.equal((typeof call.providers === 'string' ? JSON.parse(call.providers) : call.providers).tts, provider);
        const greeting = fake.sent()[0];
        assert.equal(greeting?.text, GREETING);
        const heard = (await readWav((await phone.recordings()).heard)).pcm;
        const correlation = segmentedCorrelation(await asHeardAt(greeting.pcm, fake.sampleRate, 8000), heard);
        assert.ok(correlation >= 0.9, `${provider} greeting at the phone: correlation ${correlation.toFixed(3)}`);
        t.diagnostic(`${provider} greeting at the phone: correlation ${correlation.toFixed(3)}`);
        assert.deepEqual(fake.violations(), []);
      } finally {
        await phone.stop();
        for (const path of made) await w.api('DELETE', path);
        await fake.close();
      }
    });
  }
});
