import { openai } from './calls/providers/openai.ts';
import type { Config, DatabaseConfig, SecretKeySource } from './config.ts';
import { scrubSecrets } from './voice/tts/types.ts';
import { recordingsDir } from './modules/recordings/storage.ts';

/**
 * What the service tells its operator at start and what `parley doctor` checks: one line per
 * concern, saying what is in effect and where it comes from. Never a secret: tokens and keys are
 * named by their source, a database URL loses its password.
 */
export interface Check {
  readonly name: string;
  readonly status: 'ok' | 'warn' | 'fail';
  readonly detail: string;
}

/** Where the platform LLM is when OPENAI_BASE_URL names nothing. */
const OPENAI_DEFAULT_BASE_URL = openai.defaultBaseUrl;

/** Where the admin token comes from, as the service found it at start. */
export type AdminTokenSource = 'env' | 'generated' | 'stored' | 'none';

export function describeAdminToken(source: AdminTokenSource): string {
  switch (source) {
    case 'env': return 'from PARLEY_ADMIN_TOKEN';
    case 'generated': return 'generated on this first start and printed once to the terminal; only its hash is kept';
    case 'stored': return 'the one generated on the first start (only its hash is stored); set PARLEY_ADMIN_TOKEN to use your own';
    case 'none': return 'none yet: parley serve generates one on its first start and prints it once (or set PARLEY_ADMIN_TOKEN)';
  }
}

/** The dialect and where the data is: the SQLite file, or host, port, database and user (never the password). */
export function describeDatabase(database: DatabaseConfig): string {
  if (database.dialect === 'sqlite') return database.filename === ':memory:' ? 'sqlite in memory (nothing is kept)' : `sqlite ${database.filename}`;
  const url = URL.parse(database.connectionString);
  if (!url) return 'postgres (DATABASE_URL is not a URL)';
  const name = decodeURIComponent(url.pathname.replace(/^\//, '')) || '(default database)';
  const user = url.username ? ` as ${decodeURIComponent(url.username)}` : '';
  return `postgres ${url.hostname}:${url.port || '5432'}/${name}${user}`;
}

export function describeSecretKey(source: SecretKeySource): string {
  switch (source.kind) {
    case 'env': return 'from PARLEY_SECRET_KEY';
    case 'file': return `${source.path}, beside the SQLite database${source.created ? ' (generated now)' : ''}; back it up with the database`;
    case 'memory': return 'a throwaway key (in-memory database)';
    case 'given': return 'given by the caller';
  }
}

export function describeEgress(raw: string): string {
  const ranges = raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (!ranges.length) return 'PARLEY_EGRESS_ALLOW is empty: tool webhooks and event hooks reach public addresses only (set PARLEY_EGRESS_ALLOW=127.0.0.0/8 for a tool server on this machine)';
  return `PARLEY_EGRESS_ALLOW lets tool webhooks, event hooks and SIP reach ${ranges.join(', ')}`;
}

export interface LlmProbeOptions {
  baseUrl: string | null;
  apiKey: string | null;
  defaultModel: string;
  timeoutMs: number;
}

interface ModelList {
  data?: { id?: unknown }[];
}

/**
 * Asks the LLM endpoint calls will use for its model list (`GET {base}/models`, which OpenAI,
 * Ollama, llama.cpp's server and vLLM all answer), with the key calls send. A failure says
 * what came back (status and the provider's message, scrubbed of the key) or why nothing did.
 */
export async function probeLlm(options: LlmProbeOptions): Promise<Check> {
  const base = (options.baseUrl ?? OPENAI_DEFAULT_BASE_URL).replace(/\/+$/, '');
  const where = `${base} (default model ${options.defaultModel}, ${options.apiKey ? 'with OPENAI_API_KEY' : 'no key'})`;
  let res: Response;
  try {
    res = await fetch(`${base}/models`, {
      headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (err) {
    const cause = err instanceof Error && err.name === 'TimeoutError'
      ? `no answer within ${options.timeoutMs / 1000} s`
      : (err as { cause?: { message?: string } }).cause?.message ?? (err instanceof Error ? err.message : String(err));
    return { name: 'llm', status: 'fail', detail: `${where}: GET /models got no answer (${cause}); calls will fail until it answers` };
  }
  const text = await res.text().catch(() => '');
  if (!res.ok) {
    const hint = !options.apiKey && base === OPENAI_DEFAULT_BASE_URL ? '; set OPENAI_API_KEY, or OPENAI_BASE_URL to an OpenAI-compatible local server' : '';
    return { name: 'llm', status: 'fail', detail: `${where}: GET /models answered HTTP ${res.status}: ${providerMessage(text, options.apiKey)}${hint}` };
  }
  const models = modelIds(text);
  if (models === null) return { name: 'llm', status: 'ok', detail: `${where}: answered GET /models` };
  const listed = models.includes(options.defaultModel) ? '' : `; the default model is not among them (strategies that name no model use it)`;
  return { name: 'llm', status: 'ok', detail: `${where}: answered GET /models with ${models.length} model${models.length === 1 ? '' : 's'}${listed}` };
}

function modelIds(text: string): string[] | null {
  try {
    const list = JSON.parse(text) as ModelList;
    return Array.isArray(list.data) ? list.data.map((m) => String(m.id)) : null;
  } catch {
    return null;
  }
}

function providerMessage(text: string, apiKey: string | null): string {
  let message = text;
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const inner = typeof body.error === 'object' ? body.error?.message : body.error ?? body.message;
    if (typeof inner === 'string') message = inner;
  } catch {
    // not JSON: the text as it is
  }
  return scrubSecrets(message.replace(/\s+/g, ' ').trim(), apiKey).slice(0, 200) || '(no message)';
}

/** Where call recordings go (the bucket's endpoint and name, never its keys). */
export function describeRecordings(config: Config): string {
  const dir = recordingsDir(config);
  if (!config.recordingsS3Url) return `${dir} (encrypted; kept ${config.recordingRetentionMs / 86_400_000} days)`;
  return `bucket ${config.recordingsS3Bucket ?? ''} at ${config.recordingsS3Url}, spooled in ${dir} while calls run (encrypted; kept ${config.recordingRetentionMs / 86_400_000} days)`;
}

/** The lines the service logs as it starts (the LLM probe is `probeLlm`, logged when it answers). */
export function startupChecks(config: Config, adminToken: AdminTokenSource): Check[] {
  return [
    { name: 'admin token', status: 'ok', detail: describeAdminToken(adminToken) },
    { name: 'database', status: 'ok', detail: describeDatabase(config.database) },
    { name: 'secret key', status: 'ok', detail: describeSecretKey(config.secretKeySource) },
    { name: 'egress', status: 'ok', detail: describeEgress(config.egressAllow) },
    { name: 'recordings', status: 'ok', detail: describeRecordings(config) },
  ];
}
