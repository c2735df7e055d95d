import type { Exporter } from '../../core/exporter';
import type { Logger } from '../../observability/logger';

/** Where a registered exporter's flows go, and the sampling rate its workspace registered (0: none). */
export interface ExporterRoute {
  orgId: string;
  samplingRate: number;
}

export interface ExporterSource {
  allActive(): Promise<Exporter[]>;
}

/**
 * The collector's copy of the exporter registry, by normalized address: the
 * UDP source of the datagrams, for every protocol (GoFlow2 is patched to
 * take sFlow's from the source too, not from the agent address a datagram
 * claims: docs/security/goflow2.md). It
 * is read again every `refreshMs`, so an approval, a change of rate or a
 * removal reaches every collector process within that time. Only active
 * exporters route: a pending or rejected registration's datagrams count as
 * unknown. A failed
 * refresh keeps the last copy: collection goes on while ClickHouse is away.
 */
export class ExporterDirectory {
  private routes = new Map<string, ExporterRoute>();
  private timer?: NodeJS.Timeout;
  private loaded = false;
  lastRefreshAt = 0;
  failedRefreshes = 0;

  constructor(
    private readonly config: { refreshMs: number },
    private readonly deps: { exporters: ExporterSource; log: Logger },
  ) {}

  /** The route of an address, or undefined when no workspace registered it. */
  route(address: string): ExporterRoute | undefined {
    return this.routes.get(address);
  }

  get size(): number {
    return this.routes.size;
  }

  get isLoaded(): boolean {
    return this.loaded;
  }

  async start(): Promise<void> {
    await this.refresh();
    this.schedule();
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      void this.refresh().finally(() => {
        if (this.timer) this.schedule();
      });
    }, this.config.refreshMs);
  }

  async refresh(): Promise<void> {
    try {
      const exporters = await this.deps.exporters.allActive();
      this.routes = new Map(exporters.map((e) => [e.address, { orgId: e.org_id, samplingRate: e.sampling_rate }]));
      this.loaded = true;
      this.lastRefreshAt = Date.now();
    } catch (err) {
      this.failedRefreshes += 1;
      this.deps.log.warn({ err }, 'the exporter registry could not be read; keeping the last copy');
    }
  }

  stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    return Promise.resolve();
  }
}
