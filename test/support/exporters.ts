/**
 * Registering an exporter whose flows are routed: a registration waits for
 * the platform admin (docs/security/exporters.md), so tests and the bench
 * register with a workspace key, then approve with the platform admin key.
 * No jest and no test stack here: the bench uses it too, and its build
 * compiles this file.
 */

/** What the helper needs of an API client: a test stack is one as it is; the bench adapts its `call`. */
export interface ExporterApi {
  adminKey: string;
  request(method: string, route: string, opts: { key: string; body?: unknown }): Promise<{ status: number; body: unknown }>;
}

export interface ExporterRegistration {
  address: string;
  name?: string;
  sampling_rate?: number;
}

/** Registers the exporter in the key's workspace and approves it with the platform admin key; returns its id. */
export async function registerApprovedExporter(api: ExporterApi, key: string, exporter: ExporterRegistration): Promise<string> {
  const registered = await api.request('POST', '/v1/exporters', { key, body: exporter });
  if (registered.status !== 201) throw new Error(`exporter registration failed: ${registered.status} ${JSON.stringify(registered.body)}`);
  const { id } = registered.body as { id: string };
  const approved = await api.request('POST', `/v1/exporters/${id}/approve`, { key: api.adminKey });
  if (approved.status !== 200) throw new Error(`exporter approval failed: ${approved.status} ${JSON.stringify(approved.body)}`);
  return id;
}
