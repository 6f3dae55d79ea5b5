/**
 * The outside world of bench/tool-call.bench.ts, in its own process (and core): the LLM server,
 * the webhook receiver and the call client. Both legs are timed here, on this process's clock:
 *   1. the LLM server writes the stream with the tool call → the webhook request has arrived;
 *   2. the webhook writes its response → the next LLM request has arrived.
 * Talks to the parent over IPC: `ready` with its URLs, then `call` → `called` per call, `report` → `legs`.
 */
import { startReceiver } from '../test/calls/support/receiver.ts';
import { connect } from '../test/calls/support/client.ts';
import { startLlmServer } from '../test/calls/support/llm-server.ts';

/** Parent → peer: run one call (timing its legs unless it is a warm-up), or report, or exit. */
export type PeerCommand = { type: 'call'; websocketUrl: string; turns: number; measure: boolean } | { type: 'report' } | { type: 'exit' };

const send = (message: unknown) => process.send?.(message);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const llm = await startLlmServer();
const receiver = await startReceiver('127.0.0.1');
receiver.answer = () => ({ body: '{"status":"shipped"}', contentType: 'application/json' });
llm.respond = (body) => (body.messages.at(-1).role === 'user'
  ? { toolCalls: [{ id: `call_${crypto.randomUUID().slice(0, 8)}`, name: 'lookup_order', arguments: '{"orderNumber":"A-17","express":true}' }] }
  : { text: 'Your order has shipped.' });

let measuring = false;
let written = 0;
let responded = 0;
const toWebhook: number[] = [];
const backToLlm: number[] = [];
llm.onToolCallsWrite = () => (written = performance.now());
receiver.onArrive = () => {
  if (measuring && written) toWebhook.push(performance.now() - written);
  written = 0;
};
receiver.onRespond = () => (responded = performance.now());
llm.onRequest = () => {
  if (measuring && responded) backToLlm.push(performance.now() - responded);
  responded = 0;
};

async function call({ websocketUrl, turns, measure }: { websocketUrl: string; turns: number; measure: boolean }) {
  measuring = measure;
  written = 0;
  responded = 0; // the parent's direct POSTs between calls answer through the same receiver
  const client = await connect(websocketUrl);
  await client.next('call_started');
  for (let turn = 0; turn < turns; turn++) {
    client.send({ type: 'user_message', text: `Where is order ${turn}?` });
    await client.next('assistant_message', 10_000);
    await pause(3); // a caller takes a moment to speak; lets the per-turn record write settle
  }
  client.send({ type: 'end' });
  await client.closed;
  measuring = false;
  send({ type: 'called' });
}

process.on('message', (message: PeerCommand) => {
  if (message.type === 'call') void call(message);
  else if (message.type === 'report') send({ type: 'legs', toWebhook, backToLlm });
  else void Promise.all([llm.close(), receiver.close()]).then(() => process.exit(0));
});
send({ type: 'ready', llmBaseUrl: llm.baseUrl, receiverUrl: receiver.url });
