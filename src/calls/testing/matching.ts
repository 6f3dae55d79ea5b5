/** How a test names a tool call's arguments: a JSON subset, a regular expression over their JSON text, or neither (any). */
export interface ArgumentsPattern {
  arguments?: Record<string, unknown> | undefined;
  argumentsMatch?: string | undefined;
}

/**
 * `expected` is contained in `actual`: every field of an object is there with a contained value
 * (fields not named are free), arrays hold the same number of items each contained in order,
 * anything else is equal.
 */
export function isSubset(expected: unknown, actual: unknown): boolean {
  if (Array.isArray(expected)) return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => isSubset(e, actual[i]));
  if (typeof expected === 'object' && expected !== null) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return false;
    return Object.entries(expected).every(([key, value]) => Object.hasOwn(actual, key) && isSubset(value, (actual as Record<string, unknown>)[key]));
  }
  return Object.is(expected, actual);
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The arguments the LLM sent (JSON text) match the pattern (both parts, when both are given). */
export function argumentsMatch(pattern: ArgumentsPattern, args: string): boolean {
  if (pattern.arguments && !isSubset(pattern.arguments, parsed(args))) return false;
  return !pattern.argumentsMatch || new RegExp(pattern.argumentsMatch).test(args);
}
