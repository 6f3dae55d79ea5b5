/** Row values that come back differently per dialect, read one way. */
export function readJson<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

export function readBool(value: boolean | number | null): boolean {
  return value === true || value === 1;
}

export function now(): string {
  return new Date().toISOString();
}
