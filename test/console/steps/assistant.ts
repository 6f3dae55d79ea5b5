// An assistant with a tool, built with the form; its test request and a text test call.
import assert from 'node:assert/strict';
import { HOOK_SECRET, TOOL_SECRET, UUID, type Walk } from '../support/walk.ts';

/** An assistant with a tool, built with the form; the API error shows at its field. */
export async function assistant(w: Walk): Promise<void> {
  const { page, b, tools, hooks, shoot, see, nav, api, state } = w;
  await nav('Assistants');
  await see('No assistants yet.');
  await shoot('assistants-empty');
  await page.getByRole('link', { name: 'New assistant' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Front desk');
  await page.getByLabel('System prompt').fill('You help {{firstName}} with orders.');
  await page.getByLabel('Greeting').fill('Hello {{ firstName }}, how can I help?');
  assert.equal(await page.locator('mark.placeholder').last().textContent(), '{{ firstName }}');
  await page.getByLabel('Strategy').selectOption({ label: 'Warm voice' });
  await page.getByLabel('Phone number').selectOption({ label: 'Berlin (+49301234567)' });
  await page.getByRole('button', { name: 'Add tool' }).click();
  await page.getByLabel('Tool name').fill('lookup_order');
  await page.getByLabel('Server URL').fill('http://10.20.30.40/tools');
  await page.getByLabel('Description', { exact: true }).first().fill('Find an order by its number');
  await page.getByRole('button', { name: 'Add parameter' }).click();
  await page.getByLabel('Parameter 1 name').fill('orderNumber');
  await page.getByLabel('Required').check();
  await page.getByRole('button', { name: 'Add header' }).click();
  await page.getByLabel('Header name').fill('Authorization');
  await page.getByLabel('Value', { exact: true }).fill(TOOL_SECRET);
  await page.getByRole('button', { name: 'Add hook' }).click();
  await page.getByLabel('Hook 1 event').selectOption('call_ended');
  await page.getByLabel('URL', { exact: true }).fill(hooks.url);
  await page.getByLabel('Secret').fill(HOOK_SECRET);

  b.expectFailure(/\/assistants$/, 400);
  await page.getByRole('button', { name: 'Create assistant' }).click();
  const url = page.getByLabel('Server URL');
  await page.locator('input[aria-invalid="true"][type="url"]').waitFor();
  assert.equal(await url.getAttribute('aria-invalid'), 'true');
  const describedBy = (await url.getAttribute('aria-describedby')) ?? '';
  const message = await page.locator(`[id="${describedBy.split(' ').at(-1)}"]`).textContent();
  assert.match(message ?? '', /refused by the egress policy/, 'extensions[0].parameters.serverUrl is shown at the URL field');
  await shoot('assistant-field-error');

  await url.fill(tools.url);
  await page.getByRole('button', { name: 'Create assistant' }).click();
  await page.waitForURL(new RegExp(`/console/assistants/${UUID}$`));
  state.assistantId = page.url().split('/').at(-1) ?? '';
  await page.getByRole('heading', { name: 'Front desk' }).waitFor();
  assert.equal(await page.getByLabel('Value', { exact: true }).inputValue(), '********', 'a saved header value shows masked');
  const saved = (await api(`/assistants/${state.assistantId}`)).data;
  const spec = JSON.parse(saved.extensions[0].parameters.schema);
  assert.deepEqual(spec, {
    name: 'lookup_order', description: 'Find an order by its number',
    parameters: { type: 'object', properties: { orderNumber: { type: 'string' } }, required: ['orderNumber'] },
  });
  assert.equal(saved.systemPromptGreeting, 'Hello {{ firstName }}, how can I help?');
}

/** Send a test tool request to the real receiver. */
export async function testRequest(w: Walk): Promise<void> {
  const { page, tools, shoot } = w;
  await page.getByRole('button', { name: 'Send test request' }).click();
  const result = page.locator('.test-result');
  await result.getByText('200').waitFor();
  assert.match((await result.textContent()) ?? '', /ok.*200.*ms/s);
  assert.equal(tools.requests.length, 1);
  const [sent] = tools.requests;
  assert.equal(sent?.headers.authorization, TOOL_SECRET, 'the stored header value, not the mask');
  assert.match(sent?.body.callId, /^test_/);
  assert.deepEqual({ ...sent?.body, callId: '' }, { type: 'tool_webhook', name: 'lookup_order', callId: '', transport: { type: 'websocket' }, parameters: { orderNumber: 'example' } });
  await shoot('assistant');
}

/** A text test call with a tool call, on one timeline. */
export async function testCall(w: Walk): Promise<void> {
  const { page, llm, tools, shoot, see, nav, api, state } = w;
  tools.answer = () => ({ body: 'shipped yesterday' });
  await page.getByLabel('userValues (JSON)').fill('{"firstName":"Ada"}');
  await page.getByRole('button', { name: 'Start text call' }).click();
  await see('Hello Ada, how can I help?');
  await page.getByLabel('Say').fill('Where is my order A-17?');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await see('Order A-17: shipped yesterday');
  const timeline = (await page.getByRole('list', { name: 'Call timeline' }).textContent()) ?? '';
  assert.match(timeline, /Tool call\s*lookup_order\s*\{"orderNumber":"A-17"\}/);
  assert.match(timeline, /Tool result\s*lookup_order\s*ok 200 in \d+ ms/);
  assert.equal(tools.requests.at(-1)?.body.parameters.orderNumber, 'A-17');
  // The LLM got what the console configured: the key, the strategy's temperature, the tool as the form built it.
  const asked = llm.requests.find((r) => r.messages.at(-1)?.role === 'user');
  assert.equal(llm.headers[llm.requests.indexOf(asked)]?.authorization, 'Bearer test-llm-key');
  assert.equal(asked.temperature, 0.4);
  assert.equal(asked.messages[0].content, 'You help Ada with orders.');
  assert.deepEqual(asked.tools, [{ type: 'function', function: {
    name: 'lookup_order', description: 'Find an order by its number',
    parameters: { type: 'object', properties: { orderNumber: { type: 'string' } }, required: ['orderNumber'] },
  } }]);
  await page.getByRole('button', { name: 'End call' }).click();
  await see('Call ended (client_ended)');
  await shoot('test-call');
  await page.getByRole('link', { name: 'Open the call record' }).click();
  await page.waitForURL(new RegExp(`/console/calls/${UUID}$`));
  state.callId = page.url().split('/').at(-1) ?? '';
  await see('Order A-17: shipped yesterday');
  await see(/ok\s*200/);
  // The call's own deliveries (the list filtered by callId), and each answered turn's latency as the record has it.
  const deliveries = page.getByRole('region', { name: 'Webhook deliveries' });
  await deliveries.getByRole('button', { name: /^Redeliver call_ended/ }).waitFor();
  const listed = await api(`/webhook-deliveries?callId=${state.callId}`);
  assert.deepEqual(listed.data.map((d: { eventType: string; callId: string }) => [d.eventType, d.callId]), [['call_ended', state.callId]]);
  assert.equal(await deliveries.getByRole('row').count(), 1 + listed.totalElements, 'a header and one row per delivery of this call');
  const { turns } = (await api(`/calls/${state.callId}`)).data as { turns: { index: number; latencyMs: number }[] };
  assert.equal(turns.length, 1, 'the caller spoke once');
  const shown = page.getByRole('list', { name: 'Latency of each answered turn' }).getByRole('listitem');
  assert.deepEqual((await shown.allTextContents()).map((text) => text.replace(/\s+/g, ' ')), turns.map((turn) => `Turn ${turn.index}: ${turn.latencyMs} ms`));
  await shoot('call');
  await nav('Calls');
  await page.getByLabel('Status').selectOption('ended');
  await page.getByRole('link', { name: /\d/ }).first().waitFor();
  await shoot('calls');
}
