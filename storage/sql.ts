/**
 * Client-side literal quoting. ClickHouse 18.16 has no server-side query
 * parameters, so every value that reaches SQL goes through these functions;
 * identifiers are never taken from requests.
 */
export function str(value: string): string {
  // ClickHouse string literals use backslash escapes; quote and backslash are
  // the only characters that can end or bend the literal.
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\0/g, '\\0')}'`;
}

export function int(value: number): string {
  if (!Number.isSafeInteger(value)) throw new TypeError(`not a safe integer: ${value}`);
  return String(value);
}

export function num(value: number): string {
  if (!Number.isFinite(value)) throw new TypeError(`not a finite number: ${value}`);
  return String(value);
}

export function strList(values: readonly string[]): string {
  return `(${values.map(str).join(', ')})`;
}

/** `(service, environment, region) IN (...)` for a list of correlation keys. */
export function keyIn(keys: ReadonlyArray<{ service: string; environment: string; region: string }>): string {
  return `(service, environment, region) IN (${keys.map((k) => `(${str(k.service)}, ${str(k.environment)}, ${str(k.region)})`).join(', ')})`;
}
