import type { paths } from './schema';

/** Read shapes of the API, named once from the generated paths (the OpenAPI document inlines them). */
type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type Ok<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: { 200: infer R } } ? Json<R>
  : paths[P][M] extends { responses: { 201: infer R } } ? Json<R> : never;
type Body<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type DataOf<E> = E extends { data: infer D } ? D : never;
type ItemOf<E> = E extends { data: (infer D)[] } ? D : never;

type Org<S extends string> = `/api/v1/vendors/{vendorId}/organizations/{organizationId}${S}`;

export type Me = DataOf<Ok<'/api/v1/me', 'get'>>;
export type Assistant = DataOf<Ok<Org<'/assistants/{assistantId}'>, 'get'>>;
export type AssistantWrite = Body<Org<'/assistants/{assistantId}'>, 'put'>;
export type ExtensionWrite = AssistantWrite['extensions'][number];
export type HookWrite = AssistantWrite['callEventHooks'][number];
export type Strategy = DataOf<Ok<Org<'/llm-generation-strategies/{strategyId}'>, 'get'>>;
export type StrategyWrite = Body<Org<'/llm-generation-strategies/{strategyId}'>, 'put'>;
export type SipCredential = DataOf<Ok<Org<'/sip/credentials/{sipCredentialId}'>, 'get'>>;
export type Validation = DataOf<Ok<Org<'/sip/credentials/{sipCredentialId}/validate'>, 'post'>>;
export type Call = DataOf<Ok<Org<'/calls/{callId}'>, 'get'>>;
export type Task = DataOf<Ok<Org<'/agents/{agentId}/tasks/{taskId}'>, 'get'>>;
export type TaskCreate = Body<Org<'/agents/{agentId}/tasks'>, 'post'>;
export type Delivery = ItemOf<Ok<Org<'/webhook-deliveries'>, 'get'>>;
export type VersionPage = Ok<Org<'/assistants/{assistantId}/versions'>, 'get'>;
export type Version = DataOf<Ok<Org<'/assistants/{assistantId}/versions/{version}'>, 'get'>>;
export type ExtensionTestResult = DataOf<Ok<Org<'/assistants/{assistantId}/extensions/{extensionId}/test'>, 'post'>>;

export type Kind = 'assistant' | 'agent';
export const plural = (kind: Kind) => (kind === 'agent' ? 'agents' : 'assistants');

export interface Scope {
  vendorId: string;
  organizationId: string;
}
export type ProviderCredential = DataOf<Ok<Org<'/provider-credentials/{providerCredentialId}'>, 'get'>>;
export type ProviderName = ProviderCredential['provider'];
