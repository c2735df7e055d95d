/**
 * The JSON answers of the HTTP API as tests read them, so a response body is
 * typed (`t.request<PolicyView>(...)`) instead of `any`. Each is a named
 * schema of the OpenAPI document (the titled answers of
 * api/contracts/answers.ts), as scripts/console-types.mjs generates them for
 * the console into console/src/openapi.d.ts; the set-up that `npm test` runs
 * first regenerates that file from the compiled API, so a test that reads an
 * answer the document does not describe fails the type check. Only what the
 * document cannot name is written here: a page around any item, and the
 * fields a top query names in its `by` and `metric`. Types only: they change
 * no expectation of a test.
 */
import type { components } from '../../console/src/openapi';
import type { FlowDimension } from '../../core/flow-dimensions';

type Schemas = components['schemas'];

/** A list endpoint's page (`pageOf` in api/contracts/answers.ts), around any item. */
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/** A list answer without a cursor (unknown exporters, top talkers, metric series). */
export interface DataOf<T> {
  data: T[];
}

/** Every error answer: `{ error: { code, message, details? } }`. */
export type ErrorBody = Schemas['Error'];

/** GET /healthz. */
export type HealthView = Schemas['Health'];

export type IncidentView = Schemas['Incident'];
/** A signal on an incident's timeline (GET /v1/incidents/{id}/signals). */
export type IncidentSignalView = Schemas['IncidentSignal'];

export type PolicyView = Schemas['Policy'];
export type GuardrailSettingsView = Schemas['GuardrailSettings'];
export type GuardrailChangeView = Schemas['GuardrailChange'];

/** GET /v1/playbooks: a version of the workspace's playbooks. */
export type PlaybooksView = Schemas['PlaybooksVersion'];

export type ExporterView = Schemas['Exporter'];
/** The platform admin's view of an exporter (POST /v1/exporters/{id}/approve|reject): with its workspace. */
export type WorkspaceExporterView = Schemas['WorkspaceExporter'];
/** A row of GET /v1/exporters/pending (platform admin): with the exporter active at its address, if any. */
export type PendingExporterView = Schemas['PendingExporter'];
/** A row of GET /v1/exporters/unknown (platform admin). */
export type UnknownExporterView = Schemas['UnknownExporters']['data'][number];

/** A prefix a workspace declared (POST/GET /v1/prefixes). */
export type PrefixView = Schemas['WorkspacePrefix'];
/** The platform admin's view of a prefix (POST /v1/prefixes/{id}/approve|reject): with its workspace. */
export type AdminPrefixView = Schemas['AdminWorkspacePrefix'];
/** A row of GET /v1/prefixes/pending (platform admin): with another workspace's approved prefix it overlaps, if any. */
export type PendingPrefixView = Schemas['PendingWorkspacePrefix'];

/** POST /v1/replay (202). */
export type ReplayRequested = Schemas['ReplayAccepted'];
export type ReplayView = Schemas['Replay'];

export type KeyView = Schemas['ApiKey'];
/** POST /v1/api-keys (201): the only answer that carries the secret. */
export type MintedKeyView = Schemas['MintedApiKey'];

export type AuditEntryView = Schemas['AuditEntry'];
/** GET /v1/audit/verify: the verdict on the entries one call checked, and where the next call goes on. */
export type AuditVerifyView = Schemas['AuditVerification'];

/** A row of GET /v1/telemetry/flows: the stored flow with its exporter's fields, times in ISO 8601. */
export type FlowView = Schemas['Flow'];

/** A part of the asked range and the resolution that answered it, times in ISO 8601. */
export type SegmentView = Schemas['FlowTop']['segments'][number];

/**
 * A row of GET /v1/telemetry/flows/top?by=K&metric=M: the document types a
 * row as a record of any field; the query names its key and metric, e.g.
 * `TopTalkerRow<'dst_ip', 'bytes'>`.
 */
export type TopTalkerRow<K extends 'src_ip' | 'dst_ip' | 'protocol', M extends 'bytes' | 'packets'> = Schemas['FlowTop']['data'][number] &
  Record<K, string> &
  Record<M, number> & { flows: number };

/** GET /v1/telemetry/flows/top?by=K&metric=M: the rows, the coarsest resolution read, and each segment's resolution. */
export type TopTalkersView<K extends 'src_ip' | 'dst_ip' | 'protocol', M extends 'bytes' | 'packets'> = Omit<Schemas['FlowTop'], 'data'> & DataOf<TopTalkerRow<K, M>>;

/** GET /v1/telemetry/flows/top by any dimensions. */
export type FlowTopView = Schemas['FlowTop'];

/** GET /v1/telemetry/flows/series: one series (key null), or the top keys of split_by and `{ other: true }`. */
export type FlowSeriesView = Schemas['FlowSeries'];

/** GET /v1/telemetry/metrics/series: the points and the rollup they were read from. */
export type SeriesView = Schemas['MetricSeries'];
/** A point of GET /v1/telemetry/metrics/series. */
export type SeriesPointView = SeriesView['data'][number];

/** A flow dimension analysts filter and group by. */
export type FlowDimensionName = FlowDimension;

/** Dimension values of a top row or a series key, as a test computes them: addresses and protocol as text, numbers as numbers, an absent exporter null. */
export type FlowKeyView = Partial<Record<FlowDimensionName, string | number | null>>;

/** Narrows a parsed body to the error answer's shape: an error with a string code and message. */
export function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null || !('error' in value)) return false;
  const error: unknown = value.error;
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' && 'message' in error && typeof error.message === 'string';
}

/** An automation run (GET /v1/automations/{id}), and a mitigation announced now (GET /v1/mitigations). */
export type AutomationView = Schemas['Automation'];
export type MitigationView = Schemas['Mitigation'];

/** GET /auth/session, and the answers of the routes that open or change a console session. */
export type ConsoleSessionView = Schemas['ConsoleSession'];
