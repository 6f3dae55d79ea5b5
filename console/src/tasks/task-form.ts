/** The new-task form as typed, every field a string but the two checkboxes. */
export interface TaskForm {
  targetNumber: string;
  values: { key: string; value: string }[];
  allowedHoursBegin: string;
  allowedHours: string;
  onlyWeekdays: boolean;
  timezone: string;
  maxAttempts: string;
  agentVersion: string;
  execute: boolean;
}

const MAX_KEY = 100;
const MAX_VALUES = 100;

/** What a person may write around the digits of a number: the API strips the same characters. */
const SEPARATORS = /[\s().-]/g;

/** Plain words for a callee number that is not E.164; null when it looks right (the API judges the rest: length, premium rate). */
function numberProblem(raw: string): string | null {
  const number = raw.trim();
  if (number === '') return 'Callee number is required.';
  const digits = number.replace(SEPARATORS, '');
  if (!digits.startsWith('+')) return 'Write the number in international format: a + and the country code first (e.g. +49 30 1234567).';
  if (!/^\+\d+$/.test(digits)) return 'Only digits may follow the + (spaces, dashes, dots and brackets are fine).';
  if (digits.length > 16) return 'An international number has at most 15 digits after the +.';
  if (digits.length < 4) return 'This number is too short to be an international number.';
  return null;
}

function wholeNumber(raw: string, min: number, max: number, what: string): { value?: number; problem?: string } {
  if (raw.trim() === '') return {};
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) return { problem: `${what} must be a whole number from ${min} to ${max}.` };
  return { value };
}

/**
 * Every problem of the form at once, by field (`values[2]` for a value row), and the body to
 * send when there is none. Rows left entirely empty are ignored.
 */
export function checkTaskForm(form: TaskForm): { problems: Record<string, string[]>; body: Record<string, unknown> | null } {
  const problems: Record<string, string[]> = {};
  const add = (path: string, message: string) => (problems[path] = [...(problems[path] ?? []), message]);
  const body: Record<string, unknown> = { targetNumber: form.targetNumber.trim(), execute: form.execute };
  const number = numberProblem(form.targetNumber);
  if (number) add('targetNumber', number);

  const hours = [
    ['allowedHoursBegin', wholeNumber(form.allowedHoursBegin, 0, 23, 'The opening hour')],
    ['allowedHours', wholeNumber(form.allowedHours, 1, 24, 'The window length')],
    ['maxAttempts', wholeNumber(form.maxAttempts, 1, 10, 'Attempts')],
    ['agentVersion', wholeNumber(form.agentVersion, 1, 2_147_483_647, 'The version')],
  ] as const;
  for (const [path, checked] of hours) {
    if (checked.problem) add(path, checked.problem);
    else if (checked.value !== undefined) body[path] = checked.value;
  }
  const begin = form.allowedHoursBegin.trim() !== '';
  const length = form.allowedHours.trim() !== '';
  if (begin && !length) add('allowedHours', 'Set the window length too, or clear the opening hour.');
  if (length && !begin) add('allowedHoursBegin', 'Set the opening hour too, or clear the window length.');
  if (form.onlyWeekdays) body.onlyWeekdays = true;
  if (form.timezone.trim() !== '') body.timezone = form.timezone.trim();

  const userValues: Record<string, string> = {};
  form.values.forEach(({ key, value }, i) => {
    const name = key.trim();
    if (name === '' && value === '') return;
    if (name === '') add(`values[${i}]`, 'Give this value a name.');
    else if (name.length > MAX_KEY) add(`values[${i}]`, `A name has at most ${MAX_KEY} characters.`);
    else if (name in userValues) add(`values[${i}]`, `“${name}” is used twice.`);
    else userValues[name] = value;
  });
  if (Object.keys(userValues).length > MAX_VALUES) add('userValues', `A task takes at most ${MAX_VALUES} values.`);
  if (Object.keys(userValues).length) body.userValues = userValues;
  return { problems, body: Object.keys(problems).length ? null : body };
}

/** The API's field message as a sentence: "is not a possible number…" → "This is not a possible number…". */
export function plainApiMessage(message: string): string {
  const words = message
    .replace(/^must be <= (\S+)$/, 'must be at most $1')
    .replace(/^must be >= (\S+)$/, 'must be at least $1')
    .replace(/^must be integer$/, 'must be a whole number');
  const sentence = /^(is|must|cannot|has) /.test(words) ? `This ${words}` : words;
  return `${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}${/[.!?]$/.test(sentence) ? '' : '.'}`;
}
