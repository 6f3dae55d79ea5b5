import type { Ajv } from 'ajv';
import { controlToolName } from '../../calls/control-tools.ts';
import { MASK, type SecretBox } from '../../crypto/secret-box.ts';
import type { AllowList } from '../../egress/policy.ts';
import { badRequest, type ErrorDetail } from '../../http/errors.ts';
import type { CallEventHookRead, CallEventHookWrite, ExtensionRead, ExtensionWrite } from './assistants.schemas.ts';
import { toolWebhookProblems, urlProblems } from './tool-webhook.ts';

/** The origin a secret is sent to; a kept (masked) secret never follows a change of it. */
export const originOf = (url: unknown) => (typeof url === 'string' ? (URL.parse(url)?.origin ?? url) : '');

/** An extension as stored: tool_webhook header values and signingSecret sealed. */
export interface StoredExtension {
  id: string;
  name: string;
  type: string;
  parameters: Record<string, unknown>;
}

/** A call event hook as stored; the previous secret keeps signing for a while after a rotation. */
export interface StoredHook {
  id: string;
  type: string;
  url: string;
  secret: string;
  previousSecret?: string;
  rotatedAt?: string;
}

export interface MergeContext {
  box: SecretBox;
  allow: AllowList;
  /** Meta-validates tool specifications (JSON Schema of the parameters). */
  ajv: Ajv;
  now: string;
}

/**
 * The interface's update rules: an item with a known id is updated in place, one without an id
 * is created, and an item left out is removed (the array replaces the list). An id that is not
 * an item of this assistant is a 400. Each id may appear once.
 */
function matchIds<T extends { id: string }>(existing: readonly T[], incoming: readonly { id?: string | null }[], list: string, problems: ErrorDetail[]) {
  const byId = new Map(existing.map((item) => [item.id, item]));
  const seen = new Set<string>();
  return incoming.map((item, index) => {
    if (!item.id) return undefined;
    if (seen.has(item.id)) problems.push({ path: `${list}[${index}].id`, message: 'appears twice in the list' });
    seen.add(item.id);
    const found = byId.get(item.id);
    if (!found) problems.push({ path: `${list}[${index}].id`, message: `is not an item of this resource's ${list}` });
    return found;
  });
}

/**
 * A write-only value: the mask keeps what is stored, anything else is sealed anew. `moved` names
 * the destination change (a new server URL) that makes a kept secret unsafe: it must be sent again,
 * or an editor could send a stored Authorization header to a server of their own.
 */
function keepOrSeal(value: string, stored: string | undefined, path: string, ctx: MergeContext, problems: ErrorDetail[], moved: string | null = null): string {
  if (value !== MASK) return ctx.box.seal(value);
  if (stored === undefined) problems.push({ path, message: `"${MASK}" keeps a stored value, but none is stored here; send the real value` });
  else if (moved) problems.push({ path, message: `must be sent again: ${moved}, and a kept secret never follows a new destination` });
  return stored ?? '';
}

function sealToolWebhook(params: Record<string, unknown>, previous: StoredExtension | undefined, path: string, ctx: MergeContext, problems: ErrorDetail[]) {
  const before = previous?.type === 'tool_webhook' ? previous.parameters : {};
  const storedHeaders = (before.headers ?? {}) as Record<string, string>;
  const moved = previous && originOf(before.serverUrl) !== originOf(params.serverUrl) ? 'serverUrl changed to another server' : null;
  const out: Record<string, unknown> = { ...params };
  if (params.headers) {
    const sealed: Record<string, string> = {};
    for (const [header, value] of Object.entries(params.headers as Record<string, string>)) {
      const stored = Object.entries(storedHeaders).find(([h]) => h.toLowerCase() === header.toLowerCase())?.[1];
      sealed[header] = keepOrSeal(value, stored, `${path}.headers.${header}`, ctx, problems, moved);
    }
    out.headers = sealed;
  }
  if (typeof params.signingSecret === 'string') {
    out.signingSecret = keepOrSeal(params.signingSecret, before.signingSecret as string | undefined, `${path}.signingSecret`, ctx, problems, moved);
  }
  return out;
}

export function mergeExtensions(existing: readonly StoredExtension[], incoming: readonly ExtensionWrite[], ctx: MergeContext): StoredExtension[] {
  const problems: ErrorDetail[] = [];
  const previous = matchIds(existing, incoming, 'extensions', problems);
  const toolNames = new Map<string, number>();
  const controlTypes = new Map<string, number>();
  const merged = incoming.map((item, index) => {
    const path = `extensions[${index}].parameters`;
    let parameters: Record<string, unknown> = item.parameters;
    let name = item.name ?? item.type;
    if (item.type === 'tool_webhook') {
      const found = toolWebhookProblems(item.parameters, path, ctx.allow, ctx.ajv);
      problems.push(...found);
      if (!found.length) {
        name = item.parameters.name;
        const clash = toolNames.get(name);
        if (clash !== undefined) problems.push({ path: `${path}.name`, message: `"${name}" is already the name of extensions[${clash}]` });
        toolNames.set(name, index);
        parameters = sealToolWebhook(parameters, previous[index], path, ctx, problems);
      }
    } else {
      // Call control and voicemail detection: once per assistant.
      const sameType = controlTypes.get(item.type);
      if (sameType !== undefined) problems.push({ path: `extensions[${index}].type`, message: `extensions[${sameType}] is already a ${item.type}; one per assistant` });
      controlTypes.set(item.type, index);
      if (item.type === 'voicemail_detection') {
        if (item.parameters.action === 'leave_message' && item.parameters.message === undefined) {
          problems.push({ path: `${path}.message`, message: 'is required when action is leave_message: the words left after the beep' });
        }
        return { id: previous[index]?.id ?? crypto.randomUUID(), name, type: item.type, parameters };
      }
      // The LLM sees a call-control tool under its name when that is a valid tool name, else its type.
      const toolName = controlToolName(item);
      const clash = toolNames.get(toolName);
      if (clash !== undefined) problems.push({ path: `extensions[${index}].name`, message: `"${toolName}" is already the tool name of extensions[${clash}]` });
      toolNames.set(toolName, index);
    }
    return { id: previous[index]?.id ?? crypto.randomUUID(), name, type: item.type, parameters };
  });
  if (problems.length) throw badRequest('Invalid extensions', problems);
  return merged;
}

export function mergeHooks(existing: readonly StoredHook[], incoming: readonly CallEventHookWrite[], ctx: MergeContext): StoredHook[] {
  const problems: ErrorDetail[] = [];
  const previous = matchIds(existing, incoming, 'callEventHooks', problems);
  // Each event goes once to each URL: a second hook of the same type and URL only multiplies deliveries.
  const seen = new Map<string, number>();
  incoming.forEach((item, index) => {
    const key = `${item.type} ${item.parameters.url}`;
    const first = seen.get(key);
    if (first !== undefined) problems.push({ path: `callEventHooks[${index}].parameters.url`, message: `callEventHooks[${first}] already sends ${item.type} events to this URL` });
    else seen.set(key, index);
  });
  const merged = incoming.map((item, index): StoredHook => {
    const path = `callEventHooks[${index}].parameters`;
    problems.push(...urlProblems(item.parameters.url, `${path}.url`, ctx.allow));
    const before = previous[index];
    const moved = before && originOf(before.url) !== originOf(item.parameters.url) ? 'url changed to another server' : null;
    const unchanged = before !== undefined && !moved && (item.parameters.secret === MASK || ctx.box.open(before.secret) === item.parameters.secret);
    const secret = unchanged ? before.secret : keepOrSeal(item.parameters.secret, before?.secret, `${path}.secret`, ctx, problems, moved);
    const hook: StoredHook = { id: before?.id ?? crypto.randomUUID(), type: item.type, url: item.parameters.url, secret };
    if (before && !unchanged && !moved) {
      // Rotation: the old secret keeps signing beside the new one for 24 hours (never towards a new server).
      hook.previousSecret = before.secret;
      hook.rotatedAt = ctx.now;
    } else if (before?.previousSecret && !moved) {
      hook.previousSecret = before.previousSecret;
      hook.rotatedAt = before.rotatedAt;
    }
    return hook;
  });
  if (problems.length) throw badRequest('Invalid call event hooks', problems);
  return merged;
}

/** The read shape: write-only values become the mask. */
/** The read shape of a stored item: what was written (and validated by its type's schema), secrets masked. */
export function showExtension(item: StoredExtension): ExtensionRead {
  if (item.type !== 'tool_webhook') return item as ExtensionRead;
  const parameters: Record<string, unknown> = { ...item.parameters };
  if (parameters.headers) {
    parameters.headers = Object.fromEntries(Object.keys(parameters.headers).map((h) => [h, MASK]));
  }
  if (parameters.signingSecret !== undefined) parameters.signingSecret = MASK;
  return { ...item, parameters } as ExtensionRead;
}

export function showHook(item: StoredHook): CallEventHookRead {
  return { id: item.id, type: item.type as CallEventHookRead['type'], parameters: { url: item.url, secret: MASK } };
}

