import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';

/**
 * How the demo model reads what the caller said: lower-case words without the small ones that
 * name nothing ("the", "is", "my"), a plural's trailing s dropped, so "orders" meets "order".
 */
const SMALL_WORDS = new Set([
  'a', 'an', 'the', 'is', 'are', 'was', 'be', 'it', 'its', 'of', 'to', 'in', 'on', 'at', 'by', 'for', 'from', 'with', 'and', 'or',
  'my', 'me', 'i', 'you', 'your', 'we', 'our', 'this', 'that', 'what', 'where', 'when', 'which', 'who', 'how', 'can', 'could',
  'please', 'do', 'does', 'did', 'have', 'has', 'there', 'about', 'up', 'some', 'any', 'one', 'number', 'find', 'get', 'tell',
]);

export function wordsOf(text: string): string[] {
  return text
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 1 && !SMALL_WORDS.has(w))
    .map((w) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w));
}

/** The caller's words as they were written (case and inner dashes kept): the values a tool's string parameters take. */
const tokensOf = (text: string): string[] => text.split(/[\s,;:!?"()]+/).map((t) => t.replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '')).filter(Boolean);

/** How many of the tool's words (its name and description) the caller used. */
export function matchScore(tool: ChatCompletionFunctionTool, said: ReadonlySet<string>): number {
  const own = new Set(wordsOf(`${tool.function.name.replace(/[_-]/g, ' ')} ${tool.function.description ?? ''}`));
  return [...own].filter((w) => said.has(w)).length;
}

interface ParameterSchema {
  type?: string | string[];
  enum?: unknown[];
}

interface ObjectSchema {
  properties?: Record<string, ParameterSchema>;
  required?: string[];
}

/**
 * A tool's arguments from the caller's words: a string parameter takes the word that looks like
 * an identifier (letters and digits, "A-17"), else the word after the parameter's own name, else
 * a name (a capitalised word inside the sentence), else a number, else the last word that is not
 * one of the tool's; a number takes the first word that is one (a required one, else any digits);
 * an enum the value the caller named. `missing` lists the required ones that found nothing.
 */
export function argumentsFrom(tool: ChatCompletionFunctionTool, text: string): { args: Record<string, unknown>; missing: string[] } {
  const schema = (tool.function.parameters ?? {}) as ObjectSchema;
  const required = new Set(schema.required ?? []);
  const tokens = tokensOf(text);
  const toolWords = new Set(wordsOf(`${tool.function.name.replace(/[_-]/g, ' ')} ${tool.function.description ?? ''}`));
  const args: Record<string, unknown> = {};
  const missing: string[] = [];
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const value = valueFor(name, property, tokens, toolWords, required.has(name));
    if (value !== undefined) args[name] = value;
    else if (required.has(name)) missing.push(name);
  }
  return { args, missing };
}

function valueFor(name: string, property: ParameterSchema, tokens: string[], toolWords: ReadonlySet<string>, required: boolean): unknown {
  const type = Array.isArray(property.type) ? property.type[0] : property.type;
  if (property.enum) return property.enum.find((v) => tokens.some((t) => t.toLowerCase() === String(v).toLowerCase()));
  if (type === 'number' || type === 'integer') {
    // A word that is a number ("3"); for a required one, else the digits inside a word ("A-17" gives 17, not -17).
    const digits = tokens.find((t) => /^\d+(\.\d+)?$/.test(t)) ?? (required ? tokens.join(' ').match(/\d+(\.\d+)?/)?.[0] : undefined);
    return digits === undefined ? undefined : type === 'integer' ? Number.parseInt(digits, 10) : Number(digits);
  }
  if (type !== 'string' && type !== undefined) return undefined;
  const identifier = tokens.find((t) => /\d/.test(t) && /[A-Za-z]/.test(t));
  if (identifier) return identifier;
  const own = wordsOf(name);
  const after = tokens.findIndex((t) => own.includes(wordsOf(t)[0] ?? ''));
  if (after >= 0 && tokens[after + 1]) return tokens[after + 1];
  const plain = tokens.filter((t) => wordsOf(t).length > 0 && !toolWords.has(wordsOf(t)[0]!) && !/^\d/.test(t));
  // A name ("Paris", "Ada") where there is one: a capital inside the sentence.
  return plain.find((t) => /^[A-Z]/.test(t) && t !== tokens[0]) ?? tokens.find((t) => /^\d+$/.test(t)) ?? plain.at(-1);
}
