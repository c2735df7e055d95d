import { PeriodicRound } from '../../core/periodic-round';
import { applyEnrichment, enrichmentOf } from '../../core/enrichment/flow-enrichment';
import type { NetworkTable } from '../../core/enrichment/networks';
import type { FlowInput } from '../../core/flow';
import type { Logger } from '../../observability/logger';
import { counter, gauge, type Registry } from '../../observability/metrics';
import type { EnrichmentRepo } from '../../storage/enrichment/enrichment-repo';
import { combined, fileStamps, loadAsDatabase, loadCountryDatabase, loadShared, type AsDatabase, type CountryDatabase, type DatabaseFiles, type LoadedDatabases, type RangeCache } from './database-files';

/** What the ingest paths (the API and the collector) ask of enrichment: the stored line's tail for a flow, the AS numbers put into the flow itself. */
export interface FlowEnricher {
  tailOf(orgId: string, flow: FlowInput): string;
}

/** A workspace's own networks, as the enrichment reads them on the hot path (no I/O). */
export interface NetworkTables {
  tableOf(orgId: string): NetworkTable | undefined;
}

export interface AddressEnrichmentConfig extends DatabaseFiles {
  /** How often the files are checked for a change (size or modification time), in milliseconds. */
  reloadCheckMs: number;
  /** Where the packaged CSVs' parsed range tables are kept between starts. */
  cacheDir: string;
}

/**
 * The address databases in use, loaded at start and again when a file
 * changes, without a restart: a reload builds the new lookups beside the old
 * ones and swaps them in one assignment, so a flow is enriched by one version
 * whole. A file that fails to load keeps the previous databases (counted and
 * logged). Each version is recorded in `enrichment_versions`, and the AS
 * names of a new AS database are loaded into `as_names` once.
 */
export class AddressEnrichment implements FlowEnricher {
  private current?: LoadedDatabases;
  private country?: { stamp: string; db: CountryDatabase };
  private as?: { stamp: string; db: AsDatabase };
  private readonly rounds: PeriodicRound;
  private readonly reloads;
  private readonly rangeCache: RangeCache;

  constructor(
    private readonly config: AddressEnrichmentConfig,
    private readonly deps: { repo: EnrichmentRepo; networks?: NetworkTables; registry: Registry; log: Logger; now?: () => number },
  ) {
    this.rounds = new PeriodicRound(config.reloadCheckMs, () => this.checkFiles());
    this.reloads = counter(deps.registry, {
      name: 'nettel_enrichment_reloads_total',
      help: 'Loads of the address databases (at start and when a file changed), by result',
      labelNames: ['result'] as const,
    });
    const cacheLooks = counter(deps.registry, {
      name: 'nettel_enrichment_range_cache_total',
      help: "Looks for a packaged database's parsed range table in ENRICHMENT_CACHE_DIR, by result (hit, miss, refused, unreadable, unwritable)",
      labelNames: ['result'] as const,
    });
    this.rangeCache = {
      dir: config.cacheDir,
      outcome: (result, detail) => {
        cacheLooks.inc({ result });
        if (detail) deps.log.warn({ result, detail }, 'the cache of parsed address ranges failed; the CSV was parsed instead');
      },
    };
    const version = () => this.current?.version ?? 0;
    gauge(deps.registry, {
      name: 'nettel_enrichment_version',
      help: 'The id of the address databases enriching flows now (table enrichment_versions)',
      collect() {
        this.set(version());
      },
    });
  }

  async start(): Promise<void> {
    await this.checkFiles();
    if (!this.current) throw new Error('unable to load the address databases (see the log)');
    this.rounds.start();
  }

  async stop(): Promise<void> {
    await this.rounds.stop();
  }

  /** The databases in use now (undefined before start). */
  get databases(): LoadedDatabases | undefined {
    return this.current;
  }

  tailOf(orgId: string, flow: FlowInput): string {
    const dbs = this.current;
    return dbs ? applyEnrichment(flow, enrichmentOf(flow, dbs, this.deps.networks?.tableOf(orgId))) : '';
  }

  /** Reloads the database whose file changed since its last load (the other is kept as it is); a check now, for tests and operators. */
  async checkFiles(): Promise<void> {
    try {
      const stamps = await fileStamps(this.config);
      const countryChanged = this.country?.stamp !== stamps.country;
      const asChanged = this.as?.stamp !== stamps.as;
      if (!countryChanged && !asChanged) return;
      const country = countryChanged ? { stamp: stamps.country, db: await loadShared('country', stamps.country, () => loadCountryDatabase(this.config.countryMmdb, this.rangeCache)) } : this.country!;
      const as = asChanged ? { stamp: stamps.as, db: await loadShared('as', stamps.as, () => loadAsDatabase(this.config.asnMmdb, this.rangeCache)) } : this.as!;
      const loaded = combined(country.db, as.db);
      await this.record(loaded);
      this.current = loaded;
      this.country = country;
      this.as = as;
      this.reloads.inc({ result: 'loaded' });
      this.deps.log.info({ version: loaded.version, country_db: loaded.countryDb, as_db: loaded.asDb }, 'address databases loaded');
    } catch (err) {
      this.reloads.inc({ result: 'failed' });
      this.deps.log.error({ err }, 'unable to load the address databases; the previous ones stay in use');
    }
  }

  private async record(loaded: LoadedDatabases): Promise<void> {
    const now = (this.deps.now ?? Date.now)();
    await this.deps.repo.recordVersion({ id: loaded.version, country_db: loaded.countryDb, as_db: loaded.asDb, loaded_at: now });
    if (loaded.asNames.size > 0 && !(await this.deps.repo.asNamesLoaded(loaded.asDb))) await this.deps.repo.loadAsNames(loaded.asDb, loaded.asNames, now);
  }
}
