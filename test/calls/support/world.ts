/** An app listening on loopback with a scripted LLM server, a tenant and helpers to start calls. */
import type { Dialect } from '../../../src/db/database.ts';
import { ADMIN_TOKEN, buildTestApp, createTenant, type Tenant, type TestApp, type TestAppOptions } from '../../helpers/app.ts';
import { strategyBody } from '../../helpers/fixtures.ts';
import { until } from '../../helpers/until.ts';
import { connect, type CallClient } from './client.ts';
import { startLlmServer, type LlmServer } from './llm-server.ts';

export interface World {
  t: TestApp;
  llm: LlmServer;
  address: string;
  tenant: Tenant;
  /** Everything the app logged, as text. */
  logs: () => string;
  api(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
  createAssistant(body: Record<string, unknown>, kind?: 'assistants' | 'agents'): Promise<string>;
  startCall(assistantId: string, userValues?: Record<string, unknown>, headers?: Record<string, string>): Promise<{ id: string; websocketUrl: string; expiresAt: string }>;
  /** Starts a call and connects, waiting for call_started. */
  open(assistantId: string, userValues?: Record<string, unknown>, headers?: Record<string, string>): Promise<{ id: string; client: CallClient }>;
  close(): Promise<void>;
}

export async function startWorld(dialect: Dialect, env: Record<string, string> = {}, extra: Pick<TestAppOptions, 'clock' | 'voice' | 'dialer'> = {}): Promise<World> {
  const llm = await startLlmServer();
  const t = await buildTestApp(dialect, {
    PARLEY_EGRESS_ALLOW: '127.0.0.0/8', OPENAI_BASE_URL: llm.baseUrl, OPENAI_API_KEY: 'test', ...env,
  }, { ...extra, logLevel: 'info' });
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const tenant = await createTenant(t);
  const api: World['api'] = async (method, path, body, headers = {}) => {
    const res = await fetch(address + path, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: await res.json(), headers: res.headers };
  };
  const strategy = await api('POST', `${tenant.orgPath}/llm-generation-strategies`, { ...strategyBody, parameters: { ...strategyBody.parameters, model: 'test-model', temperature: 0.3 } });
  const world: World = {
    t, llm, address, tenant, api,
    logs: () => t.logs(),
    async createAssistant(body, kind = 'assistants') {
      const res = await api('POST', `${tenant.orgPath}/${kind}`, { llmAudioContentGenerationStrategyId: strategy.body.data.id, ...body });
      if (res.status !== 201) throw new Error(`create ${kind}: ${JSON.stringify(res.body)}`);
      return res.body.data.id as string;
    },
    async startCall(assistantId, userValues, headers) {
      const res = await api('POST', `${tenant.orgPath}/assistants/${assistantId}/calls`, userValues ? { userValues } : {}, headers);
      if (res.status !== 201) throw new Error(`start call: ${JSON.stringify(res.body)}`);
      return res.body.data;
    },
    async open(assistantId, userValues, headers) {
      const call = await world.startCall(assistantId, userValues, headers);
      const client = await connect(call.websocketUrl);
      await client.next('call_started');
      return { id: call.id, client };
    },
    async close() {
      await t.close();
      await llm.close();
    },
  };
  return world;
}

/** The call as GET {org_path}/calls/{id} shows it. */
export async function callRecord(world: World, id: string): Promise<any> {
  const res = await world.api('GET', `${world.tenant.orgPath}/calls/${id}`);
  if (res.status !== 200) throw new Error(`get call: ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** Ticks the job runner until the task has had an attempt and left IN_PROGRESS; answers the task as GET shows it. */
export async function settledTask(world: World, agentId: string, taskId: string, deadlineMs = 30_000): Promise<any> {
  const read = async () => {
    await world.t.app.runner.tick();
    return (await world.api('GET', `${world.tenant.orgPath}/agents/${agentId}/tasks/${taskId}`)).body.data;
  };
  return until('the task to settle', read, (task) => task.attempts > 0 && task.status !== 'IN_PROGRESS', deadlineMs);
}
