import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { startWorld, type World } from '../calls/support/world.ts';

/** The service's side of `parley test`: a caller played and a transcript judged by the organization's LLM. */
for (const dialect of DIALECTS) {
  describe(`assistant tests: caller turns and judgments (${dialect})`, { timeout: 60_000 }, () => {
    let w: World;
    before(async () => {
      w = await startWorld(dialect);
    });
    after(() => w?.close());
    const path = (p: string) => `${w.tenant.orgPath}/assistant-tests/${p}`;

    it('a caller turn: the persona in the system prompt, the assistant\'s words as the user\'s, [HANG UP] read as hangUp', async () => {
      w.llm.respond = () => ({ text: 'Thanks, bye. [HANG UP]' });
      const res = await w.api('POST', path('caller-turn'), { persona: 'Ada, brief', goal: 'Learn about A-17', transcript: [{ role: 'assistant', text: 'Hello!' }, { role: 'caller', text: 'Hi' }, { role: 'assistant', text: 'It shipped.' }] });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.data, { text: 'Thanks, bye.', hangUp: true });
      const sent = w.llm.requests.at(-1);
      assert.match(sent.messages[0].content, /Ada, brief[\s\S]*Learn about A-17/);
      assert.deepEqual(sent.messages.slice(1).map((m: any) => m.role), ['user', 'assistant', 'user']);
    });

    it('judgments: one verdict per criterion; an answer that is not a verdict fails saying so', async () => {
      w.llm.respond = (body) => (/shipped/.test(body.messages[1].content.split('Criterion:')[1])
        ? { text: 'Sure: {"passed": true, "reason": "It said so."}' } : { text: 'I cannot tell.' });
      const res = await w.api('POST', path('judgments'), { transcript: [{ role: 'assistant', text: 'It shipped.' }], toolCalls: [{ name: 'lookup_order', arguments: '{}' }], criteria: ['Says it shipped', 'Offers a refund'] });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const [first, second] = res.body.data.verdicts;
      assert.deepEqual(first, { criterion: 'Says it shipped', passed: true, reason: 'It said so.' });
      assert.equal(second.passed, false);
      assert.match(second.reason, /could not be read as a verdict/);
    });

    it('a failing LLM is a 503 that names no key; too many criteria is a 400 naming the field', async () => {
      w.llm.respond = () => ({ status: 500, errorMessage: 'boom sk-live-abcdef123456' });
      const failed = await w.api('POST', path('judgments'), { transcript: [], criteria: ['x'] });
      assert.equal(failed.status, 503);
      assert.doesNotMatch(JSON.stringify(failed.body), /sk-live/);
      const many = await w.api('POST', path('judgments'), { transcript: [], criteria: Array.from({ length: 21 }, () => 'x') });
      assert.equal(many.status, 400);
      assert.match(JSON.stringify(many.body.error.details), /criteria/);
    });
  });
}
