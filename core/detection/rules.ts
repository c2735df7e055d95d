import { z } from 'zod';
import { parseAddressRange } from '../flow-query';
import { PrefixTable, prefixOfAddress } from '../prefix-table';
import { classIndex, countersPerClass, trafficClasses, type ClassRates, type TrafficClass } from './traffic-class';

/**
 * A workspace's rate rules: the thresholds a destination's window rates are
 * judged by, the host groups that carry their own, the whitelists, and the
 * prefix-wide ("carpet") detector's. Plain data with defaults, in the form
 * the API will show (snake_case), checked by rateRulesSchema.
 *
 * | rule | effect |
 * |---|---|
 * | thresholds | per class (total, tcp, tcp_syn, udp, icmp, fragments, dns…chargen) and measure (pps, bps, fps): a destination crosses when any rate reaches its bound; a class or measure left out is not judged |
 * | host_groups | a group's prefixes take the group's thresholds *instead of* the workspace's (the most specific prefix of any group wins; a group's missing bound is not judged) |
 * | whitelist.sources | flows from these addresses or prefixes are not counted at all |
 * | whitelist.destinations | these addresses or prefixes never cross, and are left out of their prefix's carpet total and address count |
 * | carpet | per prefix of `ipv4_prefix_length` (/24) or `ipv6_prefix_length` (/64): the summed rates of its destinations, judged by `thresholds` (or the host group's `carpet_thresholds`, by the prefix's network address) when at least `min_addresses` destinations had traffic in the window and none of them crossed on its own |
 * | quiet_seconds | event time a target that crossed must stay below every bound before the detector reports it quiet (its incident then resolves by itself) |
 */
export type RateMeasure = keyof ClassRates;
export const rateMeasures: readonly RateMeasure[] = ['pps', 'bps', 'fps'];
export type RateThresholds = Partial<Record<TrafficClass, Partial<Record<RateMeasure, number>>>>;

export interface HostGroup {
  name: string;
  prefixes: string[];
  thresholds: RateThresholds;
  carpet_thresholds?: RateThresholds;
}

export interface RateRules {
  thresholds: RateThresholds;
  host_groups: HostGroup[];
  whitelist: { sources: string[]; destinations: string[] };
  carpet: { ipv4_prefix_length: number; ipv6_prefix_length: number; min_addresses: number; thresholds: RateThresholds };
  /** Seconds of event time below every bound after a target's last crossing before it is reported quiet. */
  quiet_seconds: number;
}

/** FastNetMon's defaults per host (20 kpps, 1 Gbit/s, 3,500 flows/s), and ten times those for a prefix spread over at least 16 addresses. */
export const defaultRateRules: RateRules = {
  thresholds: { total: { pps: 20_000, bps: 1_000_000_000, fps: 3_500 } },
  host_groups: [],
  whitelist: { sources: [], destinations: [] },
  carpet: { ipv4_prefix_length: 24, ipv6_prefix_length: 64, min_addresses: 16, thresholds: { total: { pps: 200_000, bps: 10_000_000_000, fps: 35_000 } } },
  quiet_seconds: 60,
};

const bound = z.number().positive().max(Number.MAX_SAFE_INTEGER);
const classBounds = z.object({ pps: bound.optional(), bps: bound.optional(), fps: bound.optional() }).strict();
const thresholdsSchema = z.partialRecord(z.enum(trafficClasses), classBounds);
const addressOrPrefix = z.string().max(64).refine((p) => parseAddressRange(p) !== undefined, 'an IPv4 or IPv6 address or prefix (CIDR)');
const prefixes = (max: number) => z.array(addressOrPrefix).max(max);

export const rateRulesSchema = z
  .object({
    thresholds: thresholdsSchema.default(() => ({ ...defaultRateRules.thresholds })),
    host_groups: z
      .array(
        z
          .object({
            name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, '1-64 letters, digits, _ . or -'),
            prefixes: prefixes(256).min(1),
            thresholds: thresholdsSchema,
            carpet_thresholds: thresholdsSchema.optional(),
          })
          .strict(),
      )
      .max(100)
      .refine((groups) => new Set(groups.map((g) => g.name)).size === groups.length, 'host group names are unique')
      .default(() => []),
    whitelist: z.object({ sources: prefixes(1000).default(() => []), destinations: prefixes(1000).default(() => []) }).strict().default(() => ({ sources: [], destinations: [] })),
    carpet: z
      .object({
        ipv4_prefix_length: z.number().int().min(8).max(31).default(24),
        ipv6_prefix_length: z.number().int().min(16).max(127).default(64),
        min_addresses: z.number().int().min(2).max(65_536).default(16),
        thresholds: thresholdsSchema.default(() => ({ ...defaultRateRules.carpet.thresholds })),
      })
      .strict()
      .default(() => ({ ...defaultRateRules.carpet })),
    quiet_seconds: z.number().int().min(1).max(86_400).default(defaultRateRules.quiet_seconds),
  })
  .strict();

/** The bounds a window's rates broke, as `class.measure>=bound`, in class then measure order. */
export function crossedBounds(rates: Record<TrafficClass, ClassRates>, thresholds: RateThresholds): string[] {
  const out: string[] = [];
  for (const c of trafficClasses) {
    const bounds = thresholds[c];
    if (!bounds) continue;
    for (const m of rateMeasures) {
      const b = bounds[m];
      if (b !== undefined && rates[c][m] >= b) out.push(`${c}.${m}>=${b}`);
    }
  }
  return out;
}

/**
 * Whether counters over a window of `seconds` may break any of the
 * thresholds: the same arithmetic as ratesOf and crossedBounds, on the
 * bounded classes only, without building the rates. A window judges every
 * destination it holds, nearly all far below every bound.
 */
export function mayCross(counters: Float64Array, seconds: number, thresholds: RateThresholds): boolean {
  for (const c of trafficClasses) {
    const bounds = thresholds[c];
    if (!bounds) continue;
    const at = classIndex[c] * countersPerClass;
    if (bounds.pps !== undefined && counters[at]! / seconds >= bounds.pps) return true;
    if (bounds.bps !== undefined && (counters[at + 1]! * 8) / seconds >= bounds.bps) return true;
    if (bounds.fps !== undefined && counters[at + 2]! / seconds >= bounds.fps) return true;
  }
  return false;
}

function leastBounds(sets: readonly RateThresholds[]): Record<RateMeasure, number> {
  const least = { pps: Infinity, bps: Infinity, fps: Infinity };
  for (const thresholds of sets) {
    for (const bounds of Object.values(thresholds)) for (const m of rateMeasures) least[m] = Math.min(least[m], bounds?.[m] ?? Infinity);
  }
  return least;
}

/** A host group's name and thresholds as a destination takes them; the workspace's are group ''. */
export interface Judged {
  group: string;
  thresholds: RateThresholds;
}

/** What the detectors need of one destination under a book: looked up once, not in every window that holds it. */
export interface DestinationProfile {
  whitelisted: boolean;
  judged: Judged;
  carpetPrefix: string | undefined;
}

/** Destinations a book remembers the profiles of; past this it forgets them all and starts again (a bound on memory, not on answers). */
const maxProfiles = 200_000;

const entries = (list: readonly string[]) => list.map((prefix) => ({ prefix: prefix.includes('/') ? prefix : `${prefix}/${prefix.includes(':') ? 128 : 32}`, value: true as const }));

/** Rate rules made ready for lookups: host groups and whitelists as prefix tables. */
export class RateRuleBook {
  private readonly groups: PrefixTable<HostGroup>;
  private readonly sources: PrefixTable<true>;
  private readonly destinations: PrefixTable<true>;

  constructor(readonly rules: RateRules = defaultRateRules) {
    this.groups = new PrefixTable(rules.host_groups.flatMap((g) => g.prefixes.map((prefix) => ({ prefix: entries([prefix])[0]!.prefix, value: g }))));
    this.sources = new PrefixTable(entries(rules.whitelist.sources));
    this.destinations = new PrefixTable(entries(rules.whitelist.destinations));
    this.everyThresholds = [rules.thresholds, rules.carpet.thresholds, ...rules.host_groups.flatMap((g) => (g.carpet_thresholds ? [g.thresholds, g.carpet_thresholds] : [g.thresholds]))];
    this.leastHost = leastBounds([rules.thresholds, ...rules.host_groups.map((g) => g.thresholds)]);
  }

  private readonly profiles = new Map<string, DestinationProfile>();

  /** A destination's whitelisting, thresholds and carpet prefix, as the lookups below give them. */
  profileOf(address: string): DestinationProfile {
    let profile = this.profiles.get(address);
    if (!profile) {
      if (this.profiles.size >= maxProfiles) this.profiles.clear();
      profile = { whitelisted: this.isWhitelistedDestination(address), judged: this.hostThresholds(address), carpetPrefix: this.carpetPrefixOf(address) };
      this.profiles.set(address, profile);
    }
    return profile;
  }

  /** The carpet prefix a destination's traffic sums into: none for a whitelisted destination (rate-window.ts). */
  prefixOf(address: string): string | undefined {
    const profile = this.profileOf(address);
    return profile.whitelisted ? undefined : profile.carpetPrefix;
  }

  isWhitelistedSource = (address: string): boolean => this.sources.lookup(address) === true;
  isWhitelistedDestination = (address: string): boolean => this.destinations.lookup(address) === true;

  /** The thresholds a destination is judged by: its most specific host group's, or the workspace's. */
  hostThresholds(address: string): Judged {
    const g = this.groups.lookup(address);
    return g ? { group: g.name, thresholds: g.thresholds } : { group: '', thresholds: this.rules.thresholds };
  }

  /** The carpet prefix of a destination (canonical CIDR), or undefined when the text is not an address. */
  carpetPrefixOf = (address: string): string | undefined =>
    prefixOfAddress(address, this.rules.carpet.ipv4_prefix_length, this.rules.carpet.ipv6_prefix_length);

  /** Every set of thresholds the book judges by: the workspace's, the carpet's, each host group's. */
  private readonly everyThresholds: readonly RateThresholds[];

  /** The least bound of each measure over every host's thresholds (the workspace's and each host group's), any class. */
  private readonly leastHost: Readonly<Record<RateMeasure, number>>;

  /**
   * Whether a destination with these total packets, bytes and flows over a
   * window of `seconds` may reach some host's bound: every class's counters
   * are at most the `total` class's, so one below every least bound crosses
   * no host threshold (the arithmetic of mayCross).
   */
  mayReachHost(packets: number, bytes: number, flows: number, seconds: number): boolean {
    const least = this.leastHost;
    return packets / seconds >= least.pps || (bytes * 8) / seconds >= least.bps || flows / seconds >= least.fps;
  }

  /**
   * Whether counters may break any thresholds of the book: a host's, a host
   * group's or a carpet prefix's. Any destination's or prefix's sums in a
   * window are at most the window's whole traffic, so a window whose whole
   * traffic may break none decides nothing (rate-window.ts).
   */
  mayAnyCross(counters: Float64Array, seconds: number): boolean {
    return this.everyThresholds.some((t) => mayCross(counters, seconds, t));
  }

  /** The thresholds a carpet prefix is judged by: the host group of its network address, if it sets carpet thresholds, or the workspace's. */
  carpetThresholds(prefix: string): Judged {
    const g = this.groups.lookup(prefix.split('/')[0]);
    return g?.carpet_thresholds ? { group: g.name, thresholds: g.carpet_thresholds } : { group: '', thresholds: this.rules.carpet.thresholds };
  }
}
