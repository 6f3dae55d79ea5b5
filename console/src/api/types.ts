import type { Result, Schemas } from '@parley/sdk';

/** Read shapes and bodies of the API, as its OpenAPI document names them. */
export type Me = Schemas['Me'];
/** Assistants and agents have one shape. */
export type Assistant = Schemas['Assistant'];
export type AssistantWrite = Schemas['AssistantUpdate'];
export type ExtensionWrite = Schemas['AssistantUpdateLlmExtension'];
export type HookWrite = Schemas['AssistantUpdateCallEventHook'];
export type Strategy = Schemas['LlmGenerationStrategy'];
export type StrategyWrite = Schemas['LlmGenerationStrategyUpdate'];
export type SipCredential = Schemas['SipCredential'];
export type Validation = Schemas['SipValidationResult'];
export type Call = Schemas['Call'];
export type Task = Schemas['AgentTask'];
export type TaskCreate = Schemas['AgentTaskCreate'];
export type Delivery = Schemas['WebhookDelivery'];
export type VersionPage = Result<'listAssistantVersions'>;
export type Version = Result<'getAssistantVersion'>;
export type ExtensionTestResult = Schemas['ExtensionTestResult'];

export type Kind = 'assistant' | 'agent';
export const plural = (kind: Kind) => (kind === 'agent' ? 'agents' : 'assistants');

export interface Scope {
  vendorId: string;
  organizationId: string;
}
export type ProviderCredential = Schemas['ProviderCredential'];
export type ProviderName = ProviderCredential['provider'];
export type Organization = Schemas['Organization'];
export type ApiToken = Schemas['ApiToken'];
export type SipNumber = Schemas['SipNumber'];
