import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { dirname, resolve } from 'node:path';

export type DatabaseConfig =
  | { dialect: 'sqlite'; filename: string }
  | { dialect: 'postgres'; connectionString: string };

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

/**
 * Every environment variable Parley reads, in one table: its default, what it does (the CLI's
 * environment help and docs/configuration.md are checked against this list), and how it is
 * parsed. config.ts is the only reader of process.env.
 */
export interface Setting {
  readonly name: string;
  readonly default: string;
  readonly description: string;
}

/**
 * A provider's key or base URL variable. Which ones exist is the provider registry's to say
 * (src/calls/providers/registry.ts, in the engine, which this platform file must not import):
 * the app layer hands the registry's list to loadConfig, and config.ts reads them as it reads
 * its own, a base URL checked the same way. They have no default (unset: the provider's own).
 */
export interface ProviderVariable {
  readonly name: string;
  readonly description: string;
  readonly kind: 'apiKey' | 'baseUrl';
}

const num = (name: string, raw: string, { min = 0, max = Number.MAX_SAFE_INTEGER, integer = false } = {}): number => {
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
    const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
    throw new ConfigError(`${name} must be ${integer ? 'an integer' : 'a number'} ${range}, got "${raw}"`);
  }
  return n;
};

const SETTINGS_TABLE = {
  port: { name: 'PORT', default: '8080', description: 'TCP port the API listens on', parse: (v: string) => num('PORT', v, { max: 65535, integer: true }) },
  host: { name: 'HOST', default: '127.0.0.1', description: 'address the API listens on (0.0.0.0 for all)', parse: (v: string) => v },
  database: { name: 'DATABASE_URL', default: 'sqlite:./data/parley.db', description: 'sqlite:<file> (embedded, created on first start) or postgres://user:pass@host/db', parse: parseDatabaseUrl },
  adminToken: { name: 'PARLEY_ADMIN_TOKEN', default: '', description: 'the platform admin token (32+ characters); unset: one is generated on first start, printed once, and only its hash kept', parse: parseAdminToken },
  secretKey: { name: 'PARLEY_SECRET_KEY', default: '', description: '32 bytes, base64, that encrypt secrets at rest; unset with SQLite: generated into secret.key beside the database file; required with PostgreSQL', parse: (v: string) => v },
  egressAllow: { name: 'PARLEY_EGRESS_ALLOW', default: '', description: 'comma-separated CIDRs that tool webhooks, event hooks, SIP and tenants\' provider base URLs may reach although private or loopback', parse: (v: string) => v },
  publicUrl: { name: 'PARLEY_PUBLIC_URL', default: '', description: 'the public base URL of the service, for the websocketUrl of calls, the URL Twilio signs and the servers of /openapi.json (else the request\'s host)', parse: (v: string) => v || null },
  logLevel: { name: 'LOG_LEVEL', default: 'info', description: 'pino log level: fatal, error, warn, info, debug, trace or silent', parse: parseLogLevel },
  logFormat: { name: 'PARLEY_LOG_FORMAT', default: 'auto', description: 'auto: readable lines when the output is a terminal, JSON lines otherwise; json or pretty: always that (secrets are redacted in both)', parse: parseLogFormat },
  trustProxy: { name: 'PARLEY_TRUST_PROXY', default: '', description: 'trust X-Forwarded-For from these proxies (comma-separated addresses or CIDRs, or true for any) to find the client address', parse: parseTrustProxy },
  schedulerEnabled: { name: 'PARLEY_SCHEDULER', default: 'on', description: 'off runs parley serve as API only (run parley worker processes for tasks, event hooks and sweeps)', parse: (v: string) => parseSwitch('PARLEY_SCHEDULER', v) },
  dialer: { name: 'PARLEY_DIALER', default: 'sip', description: 'sip: parley serve runs a SIP endpoint that places task calls through the agents\' SIP credentials (parley worker refuses it: SIP calls need the call runtime of serve; by default, when its SIP port cannot be bound, serve warns and runs without SIP, while an explicit sip fails the start); none: no SIP in this process (task attempts fail with "no dialer configured")', parse: parseDialer },
  sipHost: { name: 'PARLEY_SIP_HOST', default: '127.0.0.1', description: 'address the SIP endpoint (UDP and TCP) and the RTP sockets bind to; 0.0.0.0 for all interfaces (then set PARLEY_SIP_ADVERTISED_HOST)', parse: (v: string) => parseAddress('PARLEY_SIP_HOST', v) },
  sipPort: { name: 'PARLEY_SIP_PORT', default: '5060', description: 'UDP and TCP port of the SIP endpoint (0 picks a free one)', parse: (v: string) => num('PARLEY_SIP_PORT', v, { max: 65535, integer: true }) },
  sipAdvertisedHost: { name: 'PARLEY_SIP_ADVERTISED_HOST', default: '', description: 'the address trunks reach the SIP endpoint at, written into Via and Contact (behind NAT: the public address); default PARLEY_SIP_HOST', parse: (v: string) => (v ? parseAddress('PARLEY_SIP_ADVERTISED_HOST', v, true) : null) },
  mediaAddress: { name: 'PARLEY_MEDIA_ADDRESS', default: '', description: 'the address put in SDP for RTP (behind NAT: the public address); default the advertised SIP address', parse: (v: string) => (v ? parseAddress('PARLEY_MEDIA_ADDRESS', v) : null) },
  rtpPorts: { name: 'PARLEY_RTP_PORTS', default: '40000-40999', description: 'UDP port range of RTP and RTCP: each call takes an even port and the odd one above it', parse: parseRtpPorts },
  ringMs: { name: 'PARLEY_RING_SECONDS', default: '45', description: 'how long a task call may ring before it is cancelled (no answer)', parse: (v: string) => num('PARLEY_RING_SECONDS', v, { min: 1, max: 600 }) * 1000 },
  taskMaxAttempts: { name: 'PARLEY_TASK_MAX_ATTEMPTS', default: '3', description: 'attempts per task unless the task says otherwise', parse: (v: string) => num('PARLEY_TASK_MAX_ATTEMPTS', v, { min: 1, integer: true }) },
  taskMaxVoicemails: { name: 'PARLEY_TASK_MAX_VOICEMAILS', default: '2', description: 'times one task\'s calls may reach voicemail (agents with voicemail_detection) before it ends: FAILED when no message was left, COMPLETED when one was', parse: (v: string) => num('PARLEY_TASK_MAX_VOICEMAILS', v, { min: 1, integer: true }) },
  retryBaseMs: { name: 'PARLEY_RETRY_BASE_SECONDS', default: '60', description: 'delay before a task\'s second attempt; it doubles with each further one, up to 1 h', parse: (v: string) => num('PARLEY_RETRY_BASE_SECONDS', v, { min: 0.001 }) * 1000 },
  leaseMs: { name: 'PARLEY_LEASE_SECONDS', default: '60', description: 'how long a worker\'s claim on a task or delivery holds without renewal', parse: (v: string) => num('PARLEY_LEASE_SECONDS', v, { min: 0.001 }) * 1000 },
  rateLimitPerMinute: { name: 'PARLEY_RATE_LIMIT_PER_MINUTE', default: '6000', description: 'requests per API token per minute, shared by all processes; 0 turns it off', parse: (v: string) => num('PARLEY_RATE_LIMIT_PER_MINUTE', v, { integer: true }) },
  failedRequestsPerAddress: { name: 'PARLEY_FAILED_REQUESTS_PER_MINUTE', default: '300', description: 'unauthenticated 401/404 answers one client address may get per minute; past it, its requests without valid credentials get 429 until the minute ends (valid tokens and /healthz, /readyz are still served); 0 turns it off', parse: (v: string) => num('PARLEY_FAILED_REQUESTS_PER_MINUTE', v, { integer: true }) },
  maxConnectionsPerAddress: { name: 'PARLEY_MAX_CONNECTIONS_PER_ADDRESS', default: '256', description: 'open connections one client address may hold', parse: (v: string) => num('PARLEY_MAX_CONNECTIONS_PER_ADDRESS', v, { min: 1, integer: true }) },
  maxConnections: { name: 'PARLEY_MAX_CONNECTIONS', default: '10000', description: 'open connections in all', parse: (v: string) => num('PARLEY_MAX_CONNECTIONS', v, { min: 1, integer: true }) },
  requestTimeoutMs: { name: 'PARLEY_REQUEST_TIMEOUT_SECONDS', default: '30', description: 'a request whose headers and body have not all arrived after this long is cut off', parse: (v: string) => num('PARLEY_REQUEST_TIMEOUT_SECONDS', v, { min: 0.1 }) * 1000 },
  llmDefaultModel: { name: 'PARLEY_LLM_DEFAULT_MODEL', default: 'gpt-4o-mini', description: 'the model of calls whose strategy names none', parse: (v: string) => v },
  llmFirstTokenMs: { name: 'PARLEY_LLM_FIRST_TOKEN_SECONDS', default: '15', description: 'an LLM answer whose first token takes longer has stalled (retried once, then the call ends)', parse: (v: string) => num('PARLEY_LLM_FIRST_TOKEN_SECONDS', v, { min: 0.001 }) * 1000 },
  llmTokenGapMs: { name: 'PARLEY_LLM_TOKEN_GAP_SECONDS', default: '10', description: 'an LLM stream silent this long between tokens has stalled', parse: (v: string) => num('PARLEY_LLM_TOKEN_GAP_SECONDS', v, { min: 0.001 }) * 1000 },
  llmHistoryMessages: { name: 'PARLEY_LLM_HISTORY_MESSAGES', default: '60', description: 'messages of the conversation sent to the LLM each turn (the system prompt is always sent)', parse: (v: string) => num('PARLEY_LLM_HISTORY_MESSAGES', v, { min: 2, integer: true }) },
  callIdleMs: { name: 'PARLEY_CALL_IDLE_SECONDS', default: '600', description: 'a call ends after this long without a client frame', parse: (v: string) => num('PARLEY_CALL_IDLE_SECONDS', v, { min: 0.001 }) * 1000 },
  callMaxMs: { name: 'PARLEY_CALL_MAX_SECONDS', default: '3600', description: 'a call ends after this long in all', parse: (v: string) => num('PARLEY_CALL_MAX_SECONDS', v, { min: 0.001 }) * 1000 },
  callMaxTurns: { name: 'PARLEY_CALL_MAX_TURNS', default: '200', description: 'user turns one call may take; the call ends (reason limit_reached) after the last', parse: (v: string) => num('PARLEY_CALL_MAX_TURNS', v, { min: 1, integer: true }) },
  callMaxTranscriptBytes: { name: 'PARLEY_CALL_MAX_TRANSCRIPT_KB', default: '512', description: 'size of one call\'s transcript in KiB; the call ends (reason limit_reached) past it', parse: (v: string) => num('PARLEY_CALL_MAX_TRANSCRIPT_KB', v, { min: 1, integer: true }) * 1024 },
  maxCallsPerOrganization: { name: 'PARLEY_MAX_CALLS_PER_ORGANIZATION', default: '50', description: 'calls one organization may have ringing or active at once; more are refused with 409', parse: (v: string) => num('PARLEY_MAX_CALLS_PER_ORGANIZATION', v, { min: 1, integer: true }) },
  callLeaseMs: { name: 'PARLEY_CALL_LEASE_SECONDS', default: '30', description: 'a live call whose process has not renewed it for this long is ended as server_lost', parse: (v: string) => num('PARLEY_CALL_LEASE_SECONDS', v, { min: 0.1 }) * 1000 },
  deliveryRetentionMs: { name: 'PARLEY_DELIVERY_RETENTION_DAYS', default: '30', description: 'delivered and failed webhook deliveries are deleted this long after they settled', parse: (v: string) => num('PARLEY_DELIVERY_RETENTION_DAYS', v, { min: 1 }) * 86_400_000 },
  recordingsDir: { name: 'PARLEY_RECORDINGS_DIR', default: '', description: 'where call recordings are kept (encrypted, files 0600), and spooled while a call runs when they go to S3; default: recordings/ beside the SQLite file (./data/recordings with PostgreSQL)', parse: (v: string) => (v ? resolve(v) : null) },
  recordingsS3Url: { name: 'PARLEY_RECORDINGS_S3_URL', default: '', description: 'an S3-compatible endpoint (http(s), path-style: MinIO, Ceph, Garage, AWS) to keep call recordings in instead of PARLEY_RECORDINGS_DIR; needs the bucket and both keys', parse: (v: string) => parseBaseUrl('PARLEY_RECORDINGS_S3_URL', v) },
  recordingsS3Bucket: { name: 'PARLEY_RECORDINGS_S3_BUCKET', default: '', description: 'the bucket recordings go to (it must exist)', parse: (v: string) => v || null },
  recordingsS3Region: { name: 'PARLEY_RECORDINGS_S3_REGION', default: 'us-east-1', description: 'the region requests to the S3 endpoint are signed for (SigV4)', parse: (v: string) => v },
  recordingsS3AccessKeyId: { name: 'PARLEY_RECORDINGS_S3_ACCESS_KEY_ID', default: '', description: 'the access key id of the S3 endpoint', parse: (v: string) => v || null },
  recordingsS3SecretAccessKey: { name: 'PARLEY_RECORDINGS_S3_SECRET_ACCESS_KEY', default: '', description: 'the secret access key of the S3 endpoint', parse: (v: string) => v || null },
  recordingRetentionMs: { name: 'PARLEY_RECORDING_RETENTION_DAYS', default: '90', description: 'recordings are deleted this long after their call (the sweep removes the file or object)', parse: (v: string) => num('PARLEY_RECORDING_RETENTION_DAYS', v, { min: 0.0001 }) * 86_400_000 },
} as const;

type Table = typeof SETTINGS_TABLE;

/** The typed configuration: each setting parsed, plus what is derived from them. */
export type Config = { readonly [K in Exclude<keyof Table, 'secretKey'>]: ReturnType<Table[K]['parse']> } & {
  readonly database: DatabaseConfig;
  readonly secretKey: Buffer;
  /** Where the secret key came from, for the start-up report (never the key). */
  readonly secretKeySource: SecretKeySource;
  /** PARLEY_DIALER was given, not defaulted: an explicit `sip` that cannot bind its port fails the start. */
  readonly dialerExplicit: boolean;
  readonly bodyLimit: number;
  /** The provider variables loadConfig was handed that are set: name → value (a base URL already checked). */
  readonly providerEnv: Readonly<Record<string, string>>;
};

/** PARLEY_SECRET_KEY, the key file beside the SQLite database, a throwaway key (in-memory database), or the caller. */
export type SecretKeySource =
  | { kind: 'env' }
  | { kind: 'file'; path: string; created: boolean }
  | { kind: 'memory' }
  | { kind: 'given' };

export const SETTINGS: readonly Setting[] = Object.values(SETTINGS_TABLE).map(({ name, default: d, description }) => ({ name, default: d, description }));

export function parseDatabaseUrl(url: string): DatabaseConfig {
  if (url.startsWith('sqlite:')) {
    const filename = url.slice('sqlite:'.length).replace(/^\/\//, '');
    if (!filename) throw new ConfigError('DATABASE_URL sqlite: needs a file name, e.g. sqlite:./data/parley.db');
    return { dialect: 'sqlite', filename: filename === ':memory:' ? filename : resolve(filename) };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    return { dialect: 'postgres', connectionString: url };
  }
  throw new ConfigError('DATABASE_URL must start with sqlite: or postgres://');
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function parseLogLevel(v: string): string {
  if (!LOG_LEVELS.includes(v)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${v}"`);
  return v;
}

const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;

function parseLogFormat(v: string): (typeof LOG_FORMATS)[number] {
  const format = LOG_FORMATS.find((f) => f === v);
  if (!format) throw new ConfigError(`PARLEY_LOG_FORMAT must be one of ${LOG_FORMATS.join(', ')}, got "${v}"`);
  return format;
}

function parseSwitch(name: string, v: string): boolean {
  if (v === 'on' || v === 'off') return v === 'on';
  throw new ConfigError(`${name} must be on or off, got "${v}"`);
}

/** A weak admin token would be guessed; one shaped like an API token would be confused with one. */
function parseAdminToken(v: string): string | null {
  if (!v) return null;
  if (v.length < 32) throw new ConfigError('PARLEY_ADMIN_TOKEN must be at least 32 characters (generate one: openssl rand -base64 32)');
  if (/^prl_[a-z0-9]{12}_/.test(v)) throw new ConfigError('PARLEY_ADMIN_TOKEN must not look like an API token (prl_…_…); choose another value');
  return v;
}

function parseTrustProxy(v: string): boolean | string[] {
  if (!v) return false;
  if (v === 'true') return true;
  return v.split(',').map((s) => s.trim()).filter(Boolean);
}

/** A provider's base URL: empty for the provider's own default, else an http(s) or ws(s) URL without credentials. */
function parseBaseUrl(name: string, v: string): string | null {
  if (!v) return null;
  const url = URL.parse(v);
  if (!url || !['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol)) throw new ConfigError(`${name} must be an http(s) or ws(s) URL`);
  if (url.username || url.password) throw new ConfigError(`${name} must not carry credentials; set the provider's API key variable instead`);
  return v;
}

/** Naming a dialer that does not exist is a start-up error, not a silent fallback. */
function parseDialer(value: string): 'sip' | 'none' {
  if (value === 'sip' || value === 'none') return value;
  throw new ConfigError(`PARLEY_DIALER must be sip or none, got "${value}"`);
}

/** An IP address (a host name only where `names` allows it: the advertised SIP host may be one). */
function parseAddress(name: string, v: string, names = false): string {
  if (isIP(v) || (names && /^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/.test(v))) return v;
  throw new ConfigError(`${name} must be an IP address${names ? ' or a host name' : ''}, got "${v}"`);
}

/** A range of UDP ports, both ends included. */
export interface PortRange {
  min: number;
  max: number;
}

/** "40000-40999" -> { min: 40000, max: 40999 }; throws on anything else. */
export function parsePortRange(text: string): PortRange {
  const m = /^\s*(\d{1,5})\s*-\s*(\d{1,5})\s*$/.exec(text);
  const min = Number(m?.[1]);
  const max = Number(m?.[2]);
  if (!m || min < 1024 || max > 65535 || max - min < 1) throw new RangeError(`invalid RTP port range ${JSON.stringify(text)} (expected e.g. 40000-40999)`);
  return { min, max };
}

function parseRtpPorts(v: string): PortRange {
  try {
    return parsePortRange(v);
  } catch {
    throw new ConfigError(`PARLEY_RTP_PORTS must be a range such as 40000-40999 (from 1024 to 65535), got "${v}"`);
  }
}

/**
 * The key that encrypts secrets at rest. With the embedded database it lives next to the
 * database file, so a fresh install works without setup; with PostgreSQL several processes
 * share the database, so the key has to come from the environment.
 */
function loadSecretKey(raw: string, database: DatabaseConfig): { key: Buffer; source: SecretKeySource } {
  const found = findSecretKey(raw, database);
  if (found.key) return { key: found.key, source: found.source };
  if (found.source.kind !== 'file') return { key: randomBytes(32), source: found.source };
  ensurePrivateDir(dirname(found.source.path));
  writeFileSync(found.source.path, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  return { key: readKeyFile(found.source.path), source: { ...found.source, created: true } };
}

/**
 * Where the secret key comes from, and the key when it already exists, without creating
 * anything (`parley doctor` reports it; start-up generates the file when it is missing).
 */
export function findSecretKey(raw: string, database: DatabaseConfig): { key: Buffer | null; source: SecretKeySource } {
  if (raw) {
    const key = Buffer.from(raw, 'base64');
    if (key.length !== 32) throw new ConfigError('PARLEY_SECRET_KEY must be 32 bytes, base64-encoded');
    return { key, source: { kind: 'env' } };
  }
  if (database.dialect === 'postgres') {
    throw new ConfigError('PARLEY_SECRET_KEY is required with PostgreSQL (generate one: openssl rand -base64 32)');
  }
  if (database.filename === ':memory:') return { key: null, source: { kind: 'memory' } };
  const path = secretKeyFile(database.filename);
  return { key: existsSync(path) ? readKeyFile(path) : null, source: { kind: 'file', path, created: false } };
}

function readKeyFile(path: string): Buffer {
  const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new ConfigError(`${path} does not hold a 32-byte base64 key`);
  return key;
}

/** Where the generated key of an embedded database lives: `secret.key` beside the database file. */
export const secretKeyFile = (databaseFile: string): string => resolve(dirname(databaseFile), 'secret.key');

/**
 * The data folder holds the database and the key: when Parley creates it, it is readable by the
 * service's user only. A folder that already exists is left as its owner set it (it may be /tmp).
 */
export function ensurePrivateDir(dir: string): void {
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** The provider variables that are set, a base URL checked like the service's own. */
function readProviderEnv(env: Env, variables: readonly ProviderVariable[]): Record<string, string> {
  const values: Record<string, string> = {};
  for (const { name, kind } of variables) {
    const raw = env[name];
    if (!raw) continue;
    values[name] = kind === 'baseUrl' ? (parseBaseUrl(name, raw) as string) : raw;
  }
  return values;
}

/**
 * The configuration from the environment. `providerVariables` are the provider registry's
 * (the app layer passes PROVIDER_VARIABLES); a command that reaches no provider may leave them out.
 */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}, providerVariables: readonly ProviderVariable[] = []): Config {
  const parsed: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(SETTINGS_TABLE)) {
    const raw = env[setting.name];
    parsed[key] = setting.parse(raw === undefined || raw === '' ? setting.default : raw);
  }
  parsed.providerEnv = Object.freeze(readProviderEnv(env, providerVariables));
  const database = overrides.database ?? (parsed.database as DatabaseConfig);
  checkRecordingsS3(parsed);
  const secret = overrides.secretKey
    ? { key: overrides.secretKey, source: { kind: 'given' } as const }
    : loadSecretKey(parsed.secretKey as string, database);
  const config = {
    ...parsed,
    database,
    secretKey: secret.key,
    secretKeySource: secret.source,
    dialerExplicit: Boolean(env.PARLEY_DIALER),
    bodyLimit: 1024 * 1024,
    ...overrides,
  } as Config;
  return Object.freeze(config);
}

/** Recordings in S3 need the whole endpoint: a bucket and both keys, or none of it. */
function checkRecordingsS3(parsed: Record<string, unknown>): void {
  const { recordingsS3Url, recordingsS3Bucket, recordingsS3AccessKeyId, recordingsS3SecretAccessKey } = parsed;
  const missing = [
    ['PARLEY_RECORDINGS_S3_BUCKET', recordingsS3Bucket], ['PARLEY_RECORDINGS_S3_ACCESS_KEY_ID', recordingsS3AccessKeyId],
    ['PARLEY_RECORDINGS_S3_SECRET_ACCESS_KEY', recordingsS3SecretAccessKey],
  ].filter(([, value]) => !value).map(([name]) => name);
  if (typeof recordingsS3Url === 'string' && !/^https?:/.test(recordingsS3Url)) throw new ConfigError('PARLEY_RECORDINGS_S3_URL must be an http(s) URL');
  if (recordingsS3Url && missing.length) throw new ConfigError(`PARLEY_RECORDINGS_S3_URL needs ${missing.join(', ')}`);
  if (!recordingsS3Url && missing.length < 3) throw new ConfigError('PARLEY_RECORDINGS_S3_BUCKET and the S3 keys need PARLEY_RECORDINGS_S3_URL');
  if (typeof recordingsS3Bucket === 'string' && !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(recordingsS3Bucket)) {
    throw new ConfigError(`PARLEY_RECORDINGS_S3_BUCKET must be a bucket name (3-63 lower-case letters, digits, dots and dashes), got "${recordingsS3Bucket}"`);
  }
}

/**
 * The variables the CLI's client commands (`parley setup`, `parley chat`) read: where the API
 * is and with which token. They configure a client of the service, not the service itself.
 */
const CLIENT_SETTINGS_TABLE = {
  url: { name: 'PARLEY_URL', default: 'http://127.0.0.1:8080', description: 'the Parley service that setup and chat talk to (default: loopback on PORT, else 8080)' },
  token: { name: 'PARLEY_TOKEN', default: '', description: 'the API token chat uses: one with calls:write (parley setup prints an editor token)' },
  vendor: { name: 'PARLEY_VENDOR', default: '', description: 'the vendor id of the organization chat calls in (parley setup prints it)' },
  organization: { name: 'PARLEY_ORGANIZATION', default: '', description: 'the organization id chat calls in; unset with an admin token: looked up from the assistant or agent id' },
  adminToken: { name: 'PARLEY_ADMIN_TOKEN', default: '', description: 'the platform admin token setup creates the vendor, organization and token with' },
} as const;

export const CLIENT_SETTINGS: readonly Setting[] = Object.values(CLIENT_SETTINGS_TABLE).map(({ name, default: d, description }) => ({ name, default: d, description }));

export interface ClientConfig {
  readonly url: string;
  readonly token: string | null;
  readonly vendor: string | null;
  readonly organization: string | null;
  readonly adminToken: string | null;
}

export function loadClientConfig(env: Env = process.env): ClientConfig {
  const value = (setting: { name: string }) => env[setting.name]?.trim() || null;
  const url = value(CLIENT_SETTINGS_TABLE.url) ?? `http://127.0.0.1:${env.PORT?.trim() || '8080'}`;
  const parsed = URL.parse(url);
  if (!parsed || !['http:', 'https:'].includes(parsed.protocol)) throw new ConfigError(`PARLEY_URL must be an http(s) URL such as http://127.0.0.1:8080, got "${url}"`);
  return Object.freeze({
    url: url.replace(/\/+$/, ''),
    token: value(CLIENT_SETTINGS_TABLE.token),
    vendor: value(CLIENT_SETTINGS_TABLE.vendor),
    organization: value(CLIENT_SETTINGS_TABLE.organization),
    adminToken: value(CLIENT_SETTINGS_TABLE.adminToken),
  });
}

/**
 * The configuration as `parley doctor` inspects it: parsed and checked like loadConfig, but
 * nothing is created on disk (a missing key file stays missing; its path is in secretKeySource).
 */
export function inspectConfig(env: Env = process.env, providerVariables: readonly ProviderVariable[] = []): Config {
  const { database, secretKey } = SETTINGS_TABLE;
  const parsedDatabase = database.parse(env[database.name] || database.default);
  const found = findSecretKey(env[secretKey.name] ?? '', parsedDatabase);
  return loadConfig(env, { secretKey: found.key ?? Buffer.alloc(32), secretKeySource: found.source }, providerVariables);
}
