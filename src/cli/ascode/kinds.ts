import type { ScopedClient } from '@parley/sdk';
import { MASK, sortedKeys, type Doc, type Json } from './documents.ts';

export type Org = ScopedClient<'vendorId' | 'organizationId'>;

/** A resource as the API reads it: the fields every kind has, and the rest as JSON. */
export interface Remote {
  id: string;
  name: string;
  createdAt: string;
  updatedAt: string;
  [field: string]: unknown;
}

/** Names by id (pull writes references) and ids by name (push sends them), per kind. */
export type KindName = 'strategy' | 'sipCredential' | 'sipNumber' | 'assistant' | 'agent';
export type NameOf = (kind: KindName, id: string | null) => string | null;
export type IdOf = (kind: KindName, name: string | null, field: string) => string | null;

/** One kind of resource: where its files go and how a document maps to the API and back. */
export interface Kind {
  name: KindName;
  folder: string;
  /** The kind in a placeholder's name: PARLEY_SECRET_<word>_… */
  word: string;
  /** The fields that name another resource, and the kind they name. */
  references: Record<string, KindName>;
  list(org: Org): AsyncIterable<Remote>;
  toDoc(remote: Remote, nameOf: NameOf): Doc;
  /** Fields a file may leave out, and the value they then have. */
  defaults: Doc;
  /** Every field a file may have (another is a mistake, never sent and never silently dropped). */
  fields: readonly string[];
  toBody(doc: Doc, idOf: IdOf): Record<string, unknown>;
  create(org: Org, body: Record<string, unknown>): Promise<Remote>;
  /** A PUT answers no body: the resource is read again for its updatedAt. */
  update(org: Org, id: string, body: Record<string, unknown>): Promise<Remote>;
  remove(org: Org, id: string): Promise<unknown>;
}

const json = (value: unknown) => sortedKeys((value ?? null) as Json);
const withoutId = (items: unknown) => ((items ?? []) as Array<Record<string, Json>>).map(({ id: _id, ...rest }) => sortedKeys(rest));
// The SDK types each body exactly; the documents are checked by the API, which names a wrong field.
type Loose = (args: unknown) => Promise<unknown>;
const loose = (org: Org, operation: keyof Org): Loose => (args) => (org as unknown as Record<string, Loose>)[operation]!(args);
const asRemote = (value: unknown) => value as Remote;
const asItems = (items: AsyncIterable<unknown>) => items as AsyncIterable<Remote>;
/** PUT, then GET (a PUT answers no body). */
const putThenGet = (put: keyof Org, get: keyof Org, param: string) => async (org: Org, id: string, body: Record<string, unknown>) => {
  await loose(org, put)({ path: { [param]: id }, body });
  return asRemote(await loose(org, get)({ path: { [param]: id } }));
};

const strategy: Kind = {
  name: 'strategy', folder: 'strategies', word: 'STRATEGY', references: {},
  list: (org) => asItems(org.paginate('listLlmGenerationStrategies')),
  toDoc: (r) => ({ name: r.name, type: r.type as string, parameters: json(r.parameters) }),
  defaults: {},
  fields: ['name', 'type', 'parameters'],
  toBody: (doc) => ({ name: doc.name, type: doc.type, parameters: doc.parameters }),
  create: async (org, body) => asRemote(await loose(org, 'createLlmGenerationStrategy')({ body })),
  update: putThenGet('updateLlmGenerationStrategy', 'getLlmGenerationStrategy', 'strategyId'),
  remove: (org, id) => org.deleteLlmGenerationStrategy({ path: { strategyId: id } }),
};

/** The API never reads a SIP password back: the document holds its placeholder, sent when the credential is written. */
const sipCredential: Kind = {
  name: 'sipCredential', folder: 'sip-credentials', word: 'SIP_CREDENTIAL', references: {},
  list: (org) => asItems(org.paginate('listSipCredentials')),
  toDoc: (r) => ({ name: r.name, hostname: r.hostname as string, port: r.port as number, transport: r.transport as string, username: r.username as string, maxAgentTasks: r.maxAgentTasks as number, register: r.register as boolean, password: MASK }),
  // The service's own defaults, so a file that leaves them out reads as the credential it makes.
  defaults: { port: 5060, transport: 'udp', maxAgentTasks: 1, register: false, password: MASK },
  fields: ['name', 'hostname', 'port', 'transport', 'username', 'maxAgentTasks', 'register', 'password'],
  // A password left out (or `********`) keeps the stored one on an update.
  toBody: ({ password, ...rest }) => (password === MASK ? rest : { ...rest, password }),
  create: async (org, body) => asRemote(await loose(org, 'createSipCredential')({ body })),
  update: putThenGet('updateSipCredential', 'getSipCredential', 'sipCredentialId'),
  remove: (org, id) => org.deleteSipCredential({ path: { sipCredentialId: id } }),
};

const sipNumber: Kind = {
  name: 'sipNumber', folder: 'sip-numbers', word: 'SIP_NUMBER', references: { sipCredential: 'sipCredential' },
  list: (org) => asItems(org.paginate('listSipNumbers')),
  toDoc: (r, nameOf) => ({ name: r.name, number: r.number as string, sipCredential: nameOf('sipCredential', r.sipCredentialId as string) }),
  defaults: {},
  fields: ['name', 'number', 'sipCredential'],
  toBody: (doc, idOf) => ({ name: doc.name, number: doc.number, sipCredentialId: idOf('sipCredential', doc.sipCredential as string | null, 'sipCredential') }),
  create: async (org, body) => asRemote(await loose(org, 'createSipNumber')({ body })),
  update: putThenGet('updateSipNumber', 'getSipNumber', 'sipNumberId'),
  remove: (org, id) => org.deleteSipNumber({ path: { sipNumberId: id } }),
};

/** Assistants and agents share one shape; extension and hook ids are left out (the service keeps an equal item's id). */
function conversational(name: 'assistant' | 'agent', folder: string, word: string, ops: { list: 'listAssistants' | 'listAgents'; create: keyof Org; update: keyof Org; get: keyof Org; idParam: string }): Kind {
  return {
    name, folder, word, references: { strategy: 'strategy', telephoneNumber: 'sipNumber' },
    list: (org) => asItems(org.paginate(ops.list)),
    toDoc: (r, nameOf) => ({
      name: r.name,
      systemPrompt: (r.systemPrompt ?? null) as string | null,
      systemPromptGreeting: (r.systemPromptGreeting ?? null) as string | null,
      strategy: nameOf('strategy', (r.llmAudioContentGenerationStrategyId ?? null) as string | null),
      telephoneNumber: nameOf('sipNumber', (r.telephoneNumberId ?? null) as string | null),
      recording: json(r.recording ?? { enabled: false }),
      analysis: json(r.analysis),
      extensions: withoutId(r.extensions),
      callEventHooks: withoutId(r.callEventHooks),
    }),
    defaults: { systemPrompt: null, systemPromptGreeting: null, strategy: null, telephoneNumber: null, recording: { enabled: false }, analysis: null, extensions: [], callEventHooks: [] },
    fields: ['name', 'systemPrompt', 'systemPromptGreeting', 'strategy', 'telephoneNumber', 'recording', 'analysis', 'extensions', 'callEventHooks'],
    toBody: (doc, idOf) => ({
      name: doc.name,
      systemPrompt: doc.systemPrompt,
      systemPromptGreeting: doc.systemPromptGreeting,
      llmAudioContentGenerationStrategyId: idOf('strategy', doc.strategy as string | null, 'strategy'),
      telephoneNumberId: idOf('sipNumber', doc.telephoneNumber as string | null, 'telephoneNumber'),
      recording: doc.recording,
      analysis: doc.analysis,
      extensions: doc.extensions,
      callEventHooks: doc.callEventHooks,
    }),
    create: async (org, body) => asRemote(await loose(org, ops.create)({ body })),
    update: putThenGet(ops.update, ops.get, ops.idParam),
    remove: (org, id) => (name === 'agent' ? org.deleteAgent({ path: { agentId: id } }) : org.deleteAssistant({ path: { assistantId: id } })),
  };
}

/** In the order push creates and updates them (what is named before what names it); deletes go in reverse. */
export const KINDS: readonly Kind[] = [
  strategy,
  sipCredential,
  sipNumber,
  conversational('assistant', 'assistants', 'ASSISTANT', { list: 'listAssistants', create: 'createAssistant', update: 'updateAssistant', get: 'getAssistant', idParam: 'assistantId' }),
  conversational('agent', 'agents', 'AGENT', { list: 'listAgents', create: 'createAgent', update: 'updateAgent', get: 'getAgent', idParam: 'agentId' }),
];
