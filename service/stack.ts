import http from 'node:http';
import path from 'node:path';
import { createApp, type RouteInfo } from '../api/app';
import type { ApiDeps } from '../api/deps';
import { KeysService } from '../api/keys-service';
import { RateLimiter } from '../api/rate-limiter';
import { ReplayService } from '../api/replay-service';
import { localNatsServer, localTemporalServer } from '../engines/engines';
import { AuditLedger } from '../storage/audit-ledger';
import { AuditRepo } from '../storage/audit-repo';
import { ChdbClickHouse, HttpClickHouse, type ClickHouse } from '../storage/clickhouse';
import { KeysRepo } from '../storage/keys-repo';
import { PoliciesRepo } from '../storage/policies-repo';
import { ReplayHistory } from '../storage/replay-history';
import { ReplaysRepo } from '../storage/replays-repo';
import { migrate } from '../storage/migrations';
import { AnalyticsRepo } from '../storage/analytics-repo';
import { IncidentsRepo } from '../storage/incidents-repo';
import { TelemetryStore } from '../storage/telemetry-store';
import { NatsClient } from '../streams/nats-client';
import { AuditHeads } from '../streams/audit-heads';
import { TelemetryPublisher } from '../streams/telemetry-publisher';
import { defaultTopology, ensureTopology } from '../streams/topology';
import { Correlator } from '../workers/correlator';
import { createReplayActivities } from '../workers/activities/replay-activities';
import { RetentionJob } from '../workers/retention';
import { TemporalWorker } from '../workers/temporal-worker';
import { StreamWorker, defaultStreamWorkerConfig } from '../workers/stream-worker';
import { TemporalClient } from '../workers/temporal-client';
import type { Config } from './config';
import type { Logger } from './logger';
import { createMetrics, type Metrics } from './metrics';

/** The contract every component keeps: a constructor that does no work, then start and stop. */
export interface Component {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface Stack {
  config: Config;
  clickhouse: ClickHouse;
  nats: NatsClient;
  temporal: TemporalClient;
  metrics: Metrics;
  api?: ApiDeps;
  /** The routes this process serves, when it runs the api role. */
  routes?: RouteInfo[];
  /** The Temporal worker, when this process runs the temporal-worker role. */
  temporalWorker?: TemporalWorker;
  /** The URL the API listens on, when this process runs the api role. */
  url?: string;
  stop(): Promise<void>;
}

class HttpServer implements Component {
  private server?: http.Server;
  constructor(
    private readonly handler: http.RequestListener,
    private readonly host: string,
    private port: number,
  ) {}
  async start(): Promise<void> {
    const server = http.createServer({ keepAliveTimeout: 65_000 }, this.handler);
    server.on('clientError', answerClientError);
    // Headers must arrive promptly: a stalled client cannot hold a socket open for long.
    server.headersTimeout = 20_000;
    server.requestTimeout = 120_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, this.host, () => resolve());
    });
    this.server = server;
    const address = server.address();
    if (address && typeof address === 'object') this.port = address.port;
  }
  get boundPort(): number {
    return this.port;
  }
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
  }
}

/**
 * Requests Node's parser rejects before Koa sees them (junk headers, oversized
 * header blocks) still get the error body.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: import('node:stream').Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request';
  const body = JSON.stringify({
    error: tooLarge
      ? { code: 'HEADERS_TOO_LARGE', message: 'request headers are too large' }
      : { code: 'VALIDATION_ERROR', message: 'malformed HTTP request' },
  });
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * Wiring for one process: engines first (local ones only where no address is
 * configured), then adapters, then the roles this process runs. Stopping runs
 * the same list backwards.
 */
export async function startStack(config: Config, log: Logger): Promise<Stack> {
  const started: Component[] = [];
  const run = async <T extends Component>(component: T): Promise<T> => {
    await component.start();
    started.push(component);
    return component;
  };
  const stop = async () => {
    for (const component of started.reverse()) {
      await component.stop().catch((err) => log.error({ err }, 'component failed to stop'));
    }
  };

  try {
    const engineDir = (name: string) => path.join(config.dataDir, name);
    let natsUrl = config.nats.url;
    if (!natsUrl) {
      await run(localNatsServer({ dir: engineDir('nats'), port: config.nats.embeddedPort, binPath: config.binPath }, log));
      natsUrl = `nats://127.0.0.1:${config.nats.embeddedPort}`;
    }
    let temporalAddress = config.temporal.address;
    if (!temporalAddress) {
      await run(
        localTemporalServer(
          {
            dir: engineDir('temporal'),
            port: config.temporal.embeddedPort,
            binPath: config.binPath,
            cli: config.temporal.cli,
            toolsDir: config.toolsDir,
          },
          log,
        ),
      );
      temporalAddress = `127.0.0.1:${config.temporal.embeddedPort}`;
    }

    const metrics = createMetrics();
    const clickhouse = await run<ClickHouse>(
      config.clickhouse.url
        ? new HttpClickHouse({ ...config.clickhouse, url: config.clickhouse.url })
        : new ChdbClickHouse({ dataDir: engineDir('chdb'), database: config.clickhouse.database }),
    );
    await migrate(clickhouse, { retentionDays: config.clickhouse.retentionDays, log });
    const nats = await run(new NatsClient({ url: natsUrl, name: 'nettel' }, log));
    const temporal = await run(new TemporalClient({ address: temporalAddress, namespace: config.temporal.namespace }, log));

    await ensureTopology(nats.jsm, {
      ...defaultTopology(config.nats.prefix),
      maxBytes: config.nats.streamMaxBytes,
      ackWaitMs: config.nats.ackWaitMs,
    });
    const store = new TelemetryStore(clickhouse);
    const incidents = new IncidentsRepo(clickhouse);
    const correlator = new Correlator({ store, incidents, metrics });
    const policies = new PoliciesRepo(clickhouse);
    const replays = new ReplaysRepo(clickhouse);

    const stack: Stack = { config, clickhouse, nats, temporal, metrics, stop };
    if (config.roles.includes('stream-workers')) {
      await run(
        new StreamWorker(
          { ...defaultStreamWorkerConfig(config.nats.prefix), ...config.workers, ackWaitMs: config.nats.ackWaitMs },
          { nats, store, correlator, metrics, log },
        ),
      );
      await run(new RetentionJob({ retentionDays: config.clickhouse.retentionDays, intervalMs: 3_600_000 }, { clickhouse, log, metrics }));
    }
    if (config.roles.includes('temporal-worker')) {
      const activities = createReplayActivities({ incidents, policies, replays, history: new ReplayHistory(clickhouse) });
      stack.temporalWorker = await run(
        new TemporalWorker(
          {
            address: temporalAddress,
            namespace: config.temporal.namespace,
            taskQueue: config.temporal.taskQueue,
            workflowBundlePath: config.temporal.workflowBundlePath,
          },
          { activities, log, metrics },
        ),
      );
    }
    if (config.roles.includes('api')) {
      const heads = await run(new AuditHeads(nats, config.nats.prefix));
      const audit = new AuditLedger(new AuditRepo(clickhouse), heads, metrics);
      const api: ApiDeps = {
        bodyLimitBytes: config.http.bodyLimitBytes,
        keys: new KeysService({ repo: new KeysRepo(clickhouse), audit, metrics, adminApiKey: config.adminApiKey }),
        audit,
        publisher: new TelemetryPublisher({ nats, prefix: config.nats.prefix, metrics }),
        rateLimiter: new RateLimiter(config.rateLimit, metrics),
        incidents,
        correlator,
        analytics: new AnalyticsRepo(clickhouse),
        policies,
        replayRecords: replays,
        replays: new ReplayService({
          client: () => temporal.client,
          taskQueue: config.temporal.taskQueue,
          incidents,
          policies,
          replays,
          audit,
        }),
        engines: [
          { name: 'nats', probe: () => nats.probe() },
          { name: 'clickhouse', probe: async () => ({ version: await clickhouse.version(), detail: clickhouse.transport }) },
          { name: 'temporal', probe: () => temporal.probe() },
        ],
        metrics,
        log,
      };
      const { app, routes } = createApp(api);
      const server = await run(new HttpServer(app.callback(), config.http.host, config.http.port));
      stack.api = api;
      stack.routes = routes;
      const shownHost = config.http.host === '0.0.0.0' ? '127.0.0.1' : config.http.host;
      stack.url = `http://${shownHost}:${server.boundPort}`;
    }
    return stack;
  } catch (err) {
    await stop();
    throw err;
  }
}
