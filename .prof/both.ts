import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import Fastify from 'fastify';
import { buildTestApp, createApiToken, createTenant } from '../test/helpers/app.ts';
import { toolWebhook } from '../test/helpers/fixtures.ts';
import { load } from '../bench/load.ts';
const t = await buildTestApp('sqlite', { PARLEY_RATE_LIMIT_PER_MINUTE: '0' }, { logLevel: 'silent' });
const small = await createTenant(t, 'Small');
const token = await createApiToken(t, small.vendorId, { role: 'editor', organizationId: small.organizationId });
const extensions = ['a', 'b', 'c', 'd', 'e'].map((n) => toolWebhook(`tool_${n}`));
const created = await t.call('POST', `${small.orgPath}/assistants`, { body: { name: 'Bench', systemPrompt: 'x', systemPromptGreeting: 'Hello.', extensions } });
const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
const url = address + (created.headers.location as string);
const headers = { authorization: `Bearer ${token}` };
const sample = await (await fetch(url, { headers })).text();
const res = await fetch(url, { headers }); console.log([...res.headers.entries()]);
const bare = Fastify({ logger: false });
bare.get('/bare', async (_req, reply) => reply.type('application/json').send(sample));
const bareUrl = (await bare.listen({ port: 0, host: '127.0.0.1' })) + '/bare';
const s = new Session(); s.connect(); await s.post('Profiler.enable');
for (const [name, u] of [['bare', bareUrl], ['ours', url]] as const) {
  await load(u, { headers, seconds: 2, connections: 50 });
  await s.post('Profiler.start');
  const r = await load(u, { headers, seconds: 5, connections: 50 });
  const { profile } = await s.post('Profiler.stop');
  writeFileSync(`${name}.cpuprofile`, JSON.stringify(profile));
  console.log(name, r);
}
await bare.close(); await t.close();
