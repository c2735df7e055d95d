/**
 * The JSON answers of the HTTP API as tests and the bench read them, so a
 * response body is typed (`t.request<PolicyView>(...)`) instead of `any`.
 * Described from the views in api/routes/*.ts; where the API answers with a
 * domain type as it is (a replay's report, a stored flow), the type is taken
 * from the service rather than written twice. Types only: they change no
 * expectation of a test.
 */
import type { FlowRow } from '../../core/flow';
import type { FlowRecord } from '../../storage/analytics-repo';
import type { ReplayReport } from '../../workflows/replay-contract';

export type { ReplayReport };

/** A list endpoint's page. */
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/** A list answer without a cursor (telemetry top talkers, metric series). */
export interface DataOf<T> {
  data: T[];
}

export interface ErrorDetail {
  index?: number;
  path?: string;
  message: string;
}

/** Every error answer: `{ error: { code, message, details? } }`. */
export interface ErrorBody {
  error: { code: string; message: string; details?: ErrorDetail[] };
}

export interface EngineHealth {
  status: 'up' | 'down';
  version?: string;
  detail?: string;
  error?: string;
}

/** GET /healthz. */
export interface HealthView {
  status: 'ok' | 'degraded';
  engines: { nats: EngineHealth; clickhouse: EngineHealth; temporal: EngineHealth };
  loops: Record<string, EngineHealth>;
}

export interface IncidentView {
  id: string;
  severity: string;
  state: string;
  status: string;
  source: string;
  service: string;
  environment: string;
  region: string;
  rule: string;
  escalations: number;
  signal_count: number;
  kinds: string[];
  first_seen: string;
  last_seen: string;
  max_latency_ms: number;
  total_bytes: number;
  updated_at: string;
}

/** A signal on an incident's timeline (GET /v1/incidents/{id}/signals). */
export interface IncidentSignalView {
  event_id: string;
  telemetry: string;
  timestamp: string;
  received_at: string;
  rule: string | null;
  asn: number | null;
  src_ip: string | null;
  dst_ip: string | null;
  dst_port: number | null;
  bytes: number;
  latency_ms: number;
}

export interface PolicyView {
  policy_id: string;
  id: string;
  name: string;
  status: 'active' | 'inactive';
  requires_approval: boolean;
  allow_execution: boolean;
  environments: string[];
  severities: string[];
  max_window_minutes: number | null;
  approval_timeout_minutes: number;
  created_at: string;
  updated_at: string;
  version: number;
}

export interface ExporterView {
  id: string;
  address: string;
  name: string;
  sampling_rate: number | null;
  status: 'pending' | 'active' | 'rejected' | 'deleted';
  created_at: string;
  updated_at: string;
  version: number;
}

/** The platform admin's view of an exporter (POST /v1/exporters/{id}/approve|reject): with its workspace. */
export interface WorkspaceExporterView extends ExporterView {
  org_id: string;
}

/** A row of GET /v1/exporters/pending (platform admin): with the exporter active at its address, if any. */
export interface PendingExporterView extends WorkspaceExporterView {
  address_active_for: { org_id: string; exporter_id: string } | null;
}

/** A row of GET /v1/exporters/unknown (platform admin). */
export interface UnknownExporterView {
  address: string;
  first_seen: string;
  last_seen: string;
  datagrams: number;
  flows: number;
}

export interface ApprovalView {
  decision: 'approve' | 'deny';
  approver_key_id: string;
  at: string;
  comment?: string;
}


/** POST /v1/replay (202). */
export interface ReplayRequested {
  replay_id: string;
  status: string;
  incident_id: string;
}

export interface ReplayView {
  replay_id: string;
  incident_id: string;
  status: string;
  requested_by: string;
  requested_at: string;
  updated_at: string;
  window_minutes: number;
  decision_deadline: string | null;
  approval_policies: string[];
  approvals: ApprovalView[];
  error: { code: string; message: string } | null;
  report: ReplayReport | null;
}

export interface KeyView {
  key_id: string;
  org_id: string;
  name: string;
  role: string;
  scope: 'tenant';
  created_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  status: 'active' | 'revoked' | 'expired';
}

/** POST /v1/api-keys (201): the only answer that carries the secret. */
export interface MintedKeyView extends KeyView {
  key: string;
}

export interface AuditEntryView {
  seq: number;
  at: string;
  actor: string;
  action: string;
  target: string;
  details: unknown;
  prev_hash: string;
  hash: string;
}

/** GET /v1/audit/verify: the verdict on the entries one call checked, and where the next call goes on. */
export interface AuditVerifyView {
  valid: boolean;
  entries: number;
  broken_at?: number;
  reason?: string;
  complete: boolean;
  next_cursor: string | null;
}

/** A row of GET /v1/telemetry/flows: the stored flow without its org and receive time, its time in ISO 8601. */
export type FlowView = Omit<FlowRow, 'org_id' | 'received_at' | 'ts'> & { ts: string };

/**
 * A row of GET /v1/telemetry/flows/top?by=K&metric=M: the grouping key and the
 * metric are fields named by the query, e.g. `TopTalkerRow<'dst_ip', 'bytes'>`.
 */
export type TopTalkerRow<K extends 'src_ip' | 'dst_ip' | 'protocol', M extends 'bytes' | 'packets'> = Record<K, string> & Record<M, number> & { flows: number };

/** A resolution a rollup read answers from: a rollup's bucket, or the raw rows. */
export type ResolutionName = '1h' | '5m' | '1m' | 'raw';

/** A part of the asked range and the resolution that answered it, times in ISO 8601. */
export interface SegmentView {
  from: string;
  to: string;
  resolution: ResolutionName;
}

/** GET /v1/telemetry/flows/top: the rows, the coarsest resolution read, and each segment's resolution. */
export interface TopTalkersView<K extends 'src_ip' | 'dst_ip' | 'protocol', M extends 'bytes' | 'packets'> extends DataOf<TopTalkerRow<K, M>> {
  resolution: ResolutionName;
  segments: SegmentView[];
}

/** A point of GET /v1/telemetry/metrics/series. */
export interface SeriesPointView {
  t: string;
  avg: number;
  samples: number;
}

/** GET /v1/telemetry/metrics/series: the points and the rollup they were read from. */
export interface SeriesView extends DataOf<SeriesPointView> {
  resolution: Exclude<ResolutionName, 'raw'>;
}

/** A flow dimension analysts filter and group by (core/flow-query.ts). */
export type FlowDimensionName =
  | 'src_ip' | 'dst_ip' | 'src_port' | 'dst_port' | 'protocol' | 'exporter'
  | 'in_if' | 'out_if' | 'src_as' | 'dst_as' | 'tcp_flags' | 'tos';

/** Dimension values of a top row or a series key: addresses and protocol as text, numbers as numbers, an absent exporter null. */
export type FlowKeyView = Partial<Record<FlowDimensionName, string | number | null>>;

/** A row of GET /v1/telemetry/flows with the exporter's fields (absent: exporter null, times null, numbers 0): the stored record, times in ISO. */
export type FlowRecordView = Omit<FlowRecord, 'ts' | 'flow_start' | 'flow_end'> & { ts: string; flow_start: string | null; flow_end: string | null };

/** A row of GET /v1/telemetry/flows/top by any dimensions: bytes and packets as `totals` asks (both with totals=all). */
export type FlowTopRowView = FlowKeyView & { bytes?: number; packets?: number; flows: number };

/** GET /v1/telemetry/flows/top by any dimensions. */
export interface FlowTopView extends DataOf<FlowTopRowView> {
  resolution: ResolutionName;
  segments: SegmentView[];
}

/** A point of GET /v1/telemetry/flows/series: a step's start, bits and packets per second, and volumes. */
export interface FlowSeriesPointView {
  t: string;
  bps: number;
  pps: number;
  bytes: number;
  packets: number;
}

/** GET /v1/telemetry/flows/series: one series (key null), or the top keys of split_by and `{ other: true }`. */
export interface FlowSeriesView {
  step: number;
  resolution: ResolutionName;
  segments: SegmentView[];
  series: Array<{ key: FlowKeyView | { other: true } | null; points: FlowSeriesPointView[] }>;
}

/** Narrows a parsed body to the error answer's shape: an error with a string code and message. */
export function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null || !('error' in value)) return false;
  const error: unknown = value.error;
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' && 'message' in error && typeof error.message === 'string';
}
