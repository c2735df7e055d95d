import type { AuditLedger } from '../storage/audit-ledger';
import type { Logger } from '../service/logger';
import type { Metrics } from '../service/metrics';
import type { AnalyticsRepo } from '../storage/analytics-repo';
import type { IncidentsRepo } from '../storage/incidents-repo';
import type { PoliciesRepo } from '../storage/policies-repo';
import type { ReplaysRepo } from '../storage/replays-repo';
import type { TelemetryPublisher } from '../streams/telemetry-publisher';
import type { Correlator } from '../workers/correlator';
import type { KeysService } from './keys-service';
import type { RateLimiter } from './rate-limiter';
import type { ReplayService } from './replay-service';

/** One engine as /healthz reports it. */
export interface EngineProbe {
  name: string;
  /** Resolves to the engine's version when it answers; rejects when it does not. */
  probe(): Promise<{ version: string; detail?: string }>;
}

/** What the HTTP layer needs; built once per process by the wiring in service/. */
export interface ApiDeps {
  bodyLimitBytes: number;
  keys: KeysService;
  audit: AuditLedger;
  publisher: TelemetryPublisher;
  rateLimiter: RateLimiter;
  incidents: IncidentsRepo;
  correlator: Correlator;
  analytics: AnalyticsRepo;
  policies: PoliciesRepo;
  replays: ReplayService;
  replayRecords: ReplaysRepo;
  engines: EngineProbe[];
  metrics: Metrics;
  log: Logger;
}
