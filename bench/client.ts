/** Small HTTP helpers for the bench: JSON calls against the service under measurement. */
export async function call<T = unknown>(
  base: string,
  method: string,
  route: string,
  key: string,
  body?: unknown,
  contentType = 'application/json',
  headers: Record<string, string> = {},
): Promise<{ status: number; body: T; headers: Headers }> {
  const res = await fetch(`${base}${route}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': contentType } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // plain text answers (POST /flow)
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

/**
 * A GET timed as a well-behaved client makes it, in milliseconds: a 429 (the
 * key's query budget is spent: QUERY_BUDGET_UNITS_PER_MINUTE) waits its
 * Retry-After and asks again, and only the answered call is timed. Any other
 * answer than 200 fails the scenario.
 */
export async function timedGet(base: string, route: string, key: string): Promise<number> {
  for (;;) {
    const t0 = performance.now();
    const res = await call(base, 'GET', route, key);
    const elapsed = performance.now() - t0;
    if (res.status === 200) return elapsed;
    if (res.status !== 429) throw new Error(`${route} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 200)}`);
    await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? 1) * 1000));
  }
}

/** A key minted by the platform admin; owned by a person of its own unless `body` names the owner (four eyes compares persons). */
export async function mintKey(base: string, adminKey: string, body: Record<string, unknown> = {}) {
  const owner = { subject: `bench-${Math.random().toString(36).slice(2)}` };
  const res = await call<{ key: string; key_id: string; org_id: string }>(base, 'POST', '/v1/api-keys', adminKey, { owner, ...body });
  if (res.status !== 201) throw new Error(`mint failed: ${res.status}`);
  return res.body;
}

/** Posts NDJSON bodies with `concurrency` clients, each request with `headers()` added; every answer must be 201. */
export async function postFlows(base: string, key: string, bodies: string[], concurrency: number, headers: () => Record<string, string> = () => ({})): Promise<void> {
  let next = 0;
  const client = async () => {
    while (next < bodies.length) {
      const body = bodies[next++]!;
      const res = await call(base, 'POST', '/flow', key, body, 'application/x-ndjson', headers());
      if (res.status !== 201) throw new Error(`POST /flow answered ${res.status}: ${JSON.stringify(res.body).slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
}

/** Flows stored for the key's workspace within the range, counted from the 1-minute rollup. */
export async function storedFlows(base: string, key: string, from: number, to: number): Promise<number> {
  const res = await call<{ data: Array<{ flows: number }> }>(base, 'GET', `/v1/telemetry/flows/top?by=protocol&limit=1000&from=${from}&to=${to}`, key);
  if (res.status !== 200) return 0;
  return res.body.data.reduce((n, r) => n + r.flows, 0);
}

export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string, intervalMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Polls `done` every 200 ms until it holds or `timeoutMs` passed; whether it held (a scenario that reports what is missing rather than failing). */
export async function settle(done: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 200));
  }
  return true;
}
