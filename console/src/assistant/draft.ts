import type { Assistant, AssistantWrite, ExtensionWrite, HookWrite } from '../api/types';

/** The mask the API shows for a write-only value; sent back, it keeps what is stored. */
export const MASK = '********';
export const PROPERTY_TYPES = ['string', 'integer', 'number', 'boolean', 'object', 'array'] as const;
export type PropertyType = (typeof PROPERTY_TYPES)[number];
export const HOOK_TYPES = ['transcript_ready', 'call_started', 'call_ended', 'task_status_changed', 'recording_ready', 'call_analyzed'] as const;
export const RUBRICS = ['pass_fail', 'score_1_10', 'descriptive'] as const;

export interface ParamForm {
  key: string;
  name: string;
  type: PropertyType;
  description: string;
  required: boolean;
}

/** A secret the API keeps: shown masked until the user chooses to replace it. */
export interface SecretForm {
  value: string;
  stored: boolean;
}

export interface HeaderForm extends SecretForm {
  key: string;
  name: string;
}

export interface ToolForm {
  kind: 'tool';
  key: string;
  id: string | null;
  name: string;
  description: string;
  serverUrl: string;
  timeoutSeconds: string;
  headers: HeaderForm[];
  params: ParamForm[];
  /** Keys of the schema or parameters this form does not edit, kept as they were (strict, signingSecret). */
  extraSchema: Record<string, unknown>;
  extraParameters: Record<string, unknown>;
}

/** An extension this form does not edit (end_call, transfer_call…), kept as it is. */
export interface OtherExtension {
  kind: 'other';
  key: string;
  value: ExtensionWrite;
}

export interface HookForm {
  key: string;
  id: string | null;
  type: (typeof HOOK_TYPES)[number];
  url: string;
  secret: SecretForm;
}

/** The after-call analysis as the form edits it: text fields, the schema as JSON text. */
export interface AnalysisForm {
  enabled: boolean;
  summaryPrompt: string;
  schema: string;
  dataPrompt: string;
  rubric: '' | (typeof RUBRICS)[number];
  successPrompt: string;
  minTurns: string;
}

export interface Draft {
  name: string;
  systemPrompt: string;
  systemPromptGreeting: string;
  strategyId: string;
  numberId: string;
  extensions: (ToolForm | OtherExtension)[];
  hooks: HookForm[];
  recording: boolean;
  analysis: AnalysisForm;
}

const noAnalysis = (): AnalysisForm => ({ enabled: false, summaryPrompt: '', schema: '', dataPrompt: '', rubric: '', successPrompt: '', minTurns: '' });

function analysisForm(a: Assistant['analysis']): AnalysisForm {
  if (!a) return noAnalysis();
  return {
    enabled: true,
    summaryPrompt: a.summary?.prompt ?? '',
    schema: a.structuredData ? JSON.stringify(a.structuredData.schema, null, 2) : '',
    dataPrompt: a.structuredData?.prompt ?? '',
    rubric: (a.successEvaluation?.rubric ?? ''),
    successPrompt: a.successEvaluation?.prompt ?? '',
    minTurns: a.minTurns === undefined ? '' : String(a.minTurns),
  };
}

/** The analysis as the API takes it; a schema that is not JSON goes as its text, for the API to name the field. */
function analysisOf(f: AnalysisForm): AssistantWrite['analysis'] {
  if (!f.enabled) return null;
  let schema: unknown = f.schema;
  try {
    schema = JSON.parse(f.schema);
  } catch {
    // Sent as it is: the API's 400 names analysis.structuredData.schema.
  }
  return {
    ...(f.summaryPrompt.trim() ? { summary: { prompt: f.summaryPrompt } } : {}),
    ...(f.schema.trim() ? { structuredData: { schema: schema as Record<string, unknown>, ...(f.dataPrompt.trim() ? { prompt: f.dataPrompt } : {}) } } : {}),
    ...(f.rubric ? { successEvaluation: { rubric: f.rubric, ...(f.successPrompt.trim() ? { prompt: f.successPrompt } : {}) } } : {}),
    ...(f.minTurns.trim() ? { minTurns: Number(f.minTurns) } : {}),
  };
}

/** A React key for rows that have no id yet (random: plain http pages have no crypto.randomUUID). */
export const newKey = () => `k${Math.random().toString(36).slice(2)}`;

export const emptyDraft = (): Draft => ({
  name: '', systemPrompt: '', systemPromptGreeting: '', strategyId: '', numberId: '', extensions: [], hooks: [], recording: false, analysis: noAnalysis(),
});

export const newTool = (): ToolForm => ({
  kind: 'tool', key: newKey(), id: null, name: '', description: '', serverUrl: '', timeoutSeconds: '', headers: [], params: [], extraSchema: {}, extraParameters: {},
});

export const newParam = (): ParamForm => ({ key: newKey(), name: '', type: 'string', description: '', required: false });

interface ToolSpec {
  name?: string;
  description?: string;
  parameters?: { properties?: Record<string, { type?: string; description?: string }>; required?: string[] };
  [key: string]: unknown;
}

function toolForm(ext: Assistant['extensions'][number]): ToolForm {
  const { name, serverUrl, schema, headers, timeoutSeconds, ...extraParameters } = ext.parameters as {
    name?: string; serverUrl?: string; schema?: string; headers?: Record<string, string>; timeoutSeconds?: number;
  };
  let spec: ToolSpec = {};
  try {
    spec = JSON.parse(schema ?? '{}') as ToolSpec;
  } catch {
    // The API validated it; an unreadable one is edited from scratch.
  }
  const { name: _n, description, parameters, ...extraSchema } = spec;
  const required = new Set(parameters?.required ?? []);
  return {
    kind: 'tool', key: ext.id, id: ext.id, name: name ?? '', description: description ?? '', serverUrl: serverUrl ?? '',
    timeoutSeconds: timeoutSeconds === undefined ? '' : String(timeoutSeconds),
    headers: Object.entries(headers ?? {}).map(([h, v]) => ({ key: newKey(), name: h, value: v, stored: v === MASK })),
    params: Object.entries(parameters?.properties ?? {}).map(([p, prop]) => ({
      key: newKey(), name: p, type: (PROPERTY_TYPES as readonly string[]).includes(prop.type ?? '') ? (prop.type as PropertyType) : 'string',
      description: prop.description ?? '', required: required.has(p),
    })),
    extraSchema, extraParameters,
  };
}

/** Read back from the API and sent back untouched: its parameters are those the API accepted for its type. */
function otherExtension(e: Assistant['extensions'][number]): OtherExtension {
  const value = { id: e.id, name: e.name, type: e.type, parameters: e.parameters } as ExtensionWrite;
  return { kind: 'other', key: e.id, value };
}

export function draftOf(a: Assistant): Draft {
  return {
    name: a.name,
    systemPrompt: a.systemPrompt ?? '',
    systemPromptGreeting: a.systemPromptGreeting ?? '',
    strategyId: a.llmAudioContentGenerationStrategyId ?? '',
    numberId: a.telephoneNumberId ?? '',
    extensions: a.extensions.map((e) => e.type === 'tool_webhook'
      ? toolForm(e)
      : otherExtension(e)),
    hooks: a.callEventHooks.map((h) => ({
      key: h.id, id: h.id, type: h.type,
      url: h.parameters.url ?? '', secret: { value: h.parameters.secret ?? '', stored: h.parameters.secret === MASK },
    })),
    recording: a.recording.enabled,
    analysis: analysisForm(a.analysis),
  };
}

/** The tool specification the LLM sees, built from the form: exactly what the `schema` string holds. */
export function toolSpec(tool: ToolForm) {
  return {
    name: tool.name,
    ...(tool.description ? { description: tool.description } : {}),
    parameters: {
      type: 'object',
      properties: Object.fromEntries(tool.params.map((p) => [p.name, { type: p.type, ...(p.description ? { description: p.description } : {}) }])),
      required: tool.params.filter((p) => p.required).map((p) => p.name),
    },
    ...tool.extraSchema,
  };
}

function extensionOf(item: ToolForm | OtherExtension): ExtensionWrite {
  if (item.kind === 'other') return item.value;
  const timeout = item.timeoutSeconds.trim();
  return {
    id: item.id,
    type: 'tool_webhook',
    parameters: {
      ...item.extraParameters,
      name: item.name,
      serverUrl: item.serverUrl,
      schema: JSON.stringify(toolSpec(item)),
      ...(item.headers.length ? { headers: Object.fromEntries(item.headers.map((h) => [h.name, h.stored ? MASK : h.value])) } : {}),
      ...(timeout ? { timeoutSeconds: Number(timeout) } : {}),
    },
  };
}

export function bodyOf(d: Draft): AssistantWrite {
  const hooks: HookWrite[] = d.hooks.map((h) => ({ id: h.id, type: h.type, parameters: { url: h.url, secret: h.secret.stored ? MASK : h.secret.value } }));
  return {
    name: d.name,
    systemPrompt: d.systemPrompt || null,
    systemPromptGreeting: d.systemPromptGreeting || null,
    llmAudioContentGenerationStrategyId: d.strategyId || null,
    telephoneNumberId: d.numberId || null,
    extensions: d.extensions.map(extensionOf),
    callEventHooks: hooks,
    recording: { enabled: d.recording },
    analysis: analysisOf(d.analysis),
  };
}

/** Sample arguments for a test request, one value of the right type per parameter. */
export function sampleArguments(tool: ToolForm): Record<string, unknown> {
  const sample: Record<PropertyType, unknown> = { string: 'example', integer: 1, number: 1.5, boolean: true, object: {}, array: [] };
  return Object.fromEntries(tool.params.map((p) => [p.name, sample[p.type]]));
}
