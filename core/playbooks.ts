import type { Person } from './person';
import { canonicalJson } from './canonical-json';
import { z } from 'zod';
import type { Severity } from './correlation';
import { normalizeAddress } from './exporter';
import type { TcpFlag } from './mitigation';
import { hostRoute } from './automation-plan';
import { mitigationActions, parsePrefix, prefixWithin } from './mitigation-policy';
import { actionSchema } from './playbook-actions';
import { isAddressText, labelSchema, telemetryKinds, type TelemetryKind } from './telemetry';

/**
 * A workspace's playbooks: what the automation does with an incident. A
 * playbook matches incidents by their facts and lists actions: a BGP
 * blackhole of the incident's destination, a Flowspec rule on it (RFC 8955:
 * discard, or a rate limit), or a signed webhook call. Versioned like
 * detection rules: a change writes the next version of the whole document
 * (application/playbook-service). Matching is a pure function, here; what an
 * action may do is bounded by the policies (core/mitigation-policy.ts).
 *
 * | field | bounds |
 * |---|---|
 * | playbooks | 0–64 per workspace |
 * | id | `^[a-z0-9][a-z0-9_-]{0,63}$`, unique in the document |
 * | actions | 1–8 |
 * | duration_minutes | 1–10080 |
 * | communities | ≤ 8, `asn:value`, each 0–65535 |
 * | protocols | ≤ 8, 0–255 or `tcp`, `udp`, `icmp` (stored as numbers) |
 * | source_ports, destination_ports | ≤ 16 each, 0–65535 |
 * | tcp_flags | ≤ 8 of `fin syn rst psh ack urg ece cwr`, each once; only with protocols empty or holding 6 (tcp) |
 * | packet_length | `{min, max}`, 0–65535, min ≤ max, or null |
 * | rate_bytes_per_second | 1–10^12 |
 * | attack_share (flowspec_fingerprint) | 0.5–1, default 0.9: the share of the attack's packets its rule must cover |
 * | baseline_share (flowspec_fingerprint) | 0–0.5, default 0.1: the most of the destination's normal traffic its rule may cover |
 * | until_attack_ends (network actions) | true: withdrawn when the incident resolves, duration_minutes at the longest |
 *
 * `flowspec_fingerprint` writes no filter in advance: when a run plans it, the
 * attack's fingerprint on the stored flows (core/detection/fingerprint.ts)
 * becomes a Flowspec discard (workers/governance/activities/action-planner.ts).
 */
export const playbookActionTypes = ['blackhole', 'flowspec_discard', 'flowspec_rate_limit', 'flowspec_fingerprint', 'webhook'] as const;
export type PlaybookActionType = (typeof playbookActionTypes)[number];

/** RFC 8955 match beyond the destination (the incident's address). */
export interface FlowspecFilter {
  /** IP protocol numbers; the API also takes 'tcp'|'udp'|'icmp' and stores numbers. */
  protocols: number[];
  source_ports: number[];
  destination_ports: number[];
  /** The rule matches packets with every one of these TCP flags set (RFC 8955's bitmask match); `[]`: any. */
  tcp_flags: TcpFlag[];
  packet_length: { min: number; max: number } | null;
}

/** A network action's hold: withdrawn when its incident resolves (the attack ended), `duration_minutes` at the longest. */
interface Held {
  until_attack_ends?: boolean;
}

export type PlaybookAction =
  | ({ type: 'blackhole'; duration_minutes: number; communities: string[]; next_hop: string | null } & Held)
  | ({ type: 'flowspec_discard'; duration_minutes: number } & FlowspecFilter & Held)
  | ({ type: 'flowspec_rate_limit'; duration_minutes: number; rate_bytes_per_second: number } & FlowspecFilter & Held)
  | ({ type: 'flowspec_fingerprint'; duration_minutes: number; attack_share: number; baseline_share: number } & Held)
  | { type: 'webhook' };

/** Every list empty matches any incident; each list given must match. */
export interface PlaybookMatch {
  /** A rule's name matches the incident's rule with or without its bound: `traffic_volume` matches `traffic_volume>=1000B/min`. */
  rules: string[];
  /** The incident carries at least one of these kinds. */
  kinds: TelemetryKind[];
  severities: Severity[];
  environments: string[];
  services: string[];
  /** CIDR; the incident's destination (its service, when that is an IP address) lies within one. */
  destinations: string[];
}

export interface Playbook {
  id: string;
  name: string;
  enabled: boolean;
  match: PlaybookMatch;
  actions: PlaybookAction[];
}

/** One version of a workspace's playbooks; version 0, no playbook, is never stored. */
export interface VersionedPlaybooks {
  /** 0 = none ever set. */
  version: number;
  playbooks: Playbook[];
  /** When it was set (epoch ms); null for version 0. */
  created_at: number | null;
  /** The key that set it; empty for version 0. */
  actor: string;
  /** The person behind `actor` (null for a service key); versions stored before persons read as the key's person of its own. */
  actor_person: Person | null;
}

export const noPlaybooks: VersionedPlaybooks = { version: 0, playbooks: [], created_at: null, actor: '', actor_person: null };

export const maxPlaybooks = 64;

const cidr = z.string().max(64).refine((p) => parsePrefix(p) !== undefined, 'must be a CIDR prefix (address/length)');
const listOf = <T extends z.ZodType>(item: T) => z.array(item).max(100).default([]);

const matchSchema = z
  .object({
    rules: listOf(labelSchema),
    kinds: listOf(z.enum(telemetryKinds)),
    severities: listOf(z.enum(['high', 'critical'])),
    environments: listOf(labelSchema),
    services: listOf(labelSchema),
    destinations: listOf(cidr),
  })
  .strict();

const playbookSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be 1-64 of a-z, 0-9, _ and -, starting with a letter or digit'),
    name: z.string().trim().min(1).max(200),
    enabled: z.boolean().default(true),
    match: matchSchema.default(() => matchSchema.parse({})),
    actions: z.array(actionSchema).min(1).max(8),
  })
  .strict();

/** The document as the API takes it (PUT): the whole list, defaults filled; ids unique. */
export const playbooksSchema = z
  .object({
    playbooks: z
      .array(playbookSchema)
      .max(maxPlaybooks)
      .superRefine((list, ctx) => {
        const seen = new Set<string>();
        list.forEach((p, i) => {
          if (seen.has(p.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `the id ${p.id} is given twice` });
          seen.add(p.id);
        });
      }),
  })
  .strict();

export type PlaybooksDocument = z.output<typeof playbooksSchema>;

/** Playbooks read back from storage: parsed by the same schema, so a field added later takes its default in older versions. */
export function parseStoredPlaybooks(json: string): Playbook[] {
  return playbooksSchema.parse({ playbooks: JSON.parse(json) as unknown }).playbooks;
}

/** What an incident offers a playbook's match. */
export interface IncidentFacts {
  rule: string;
  kinds: string[];
  severity: Severity;
  environment: string;
  service: string;
}

/** The incident's destination address when its service is one (IPv4 or IPv6 text, normalized), else undefined. */
export function incidentDestination(incident: Pick<IncidentFacts, 'service'>): string | undefined {
  return isAddressText(incident.service) ? normalizeAddress(incident.service) : undefined;
}

/** The actions that announce a route: the fingerprint's becomes a Flowspec discard when planned. */
const networkActions: ReadonlySet<string> = new Set([...mitigationActions, 'flowspec_fingerprint']);

/** Whether the playbook acts on the network (announces a route), so needs an address to act on. */
export const hasNetworkAction = (p: Pick<Playbook, 'actions'>) => p.actions.some((a) => networkActions.has(a.type));

/** A rule's name with or without its bound: `metric_threshold:latency_ms` matches `metric_threshold:latency_ms>=1000`. */
const ruleMatches = (name: string, rule: string) => rule === name || (rule.startsWith(name) && /^[[<>]/.test(rule.slice(name.length)));

/** The host route of an address, as CIDR. */

function matchHolds(m: PlaybookMatch, incident: IncidentFacts, destination: string | undefined): boolean {
  const any = <T>(list: readonly T[], holds: (item: T) => boolean) => list.length === 0 || list.some(holds);
  return (
    any(m.rules, (name) => ruleMatches(name, incident.rule)) &&
    any(m.kinds, (kind) => incident.kinds.includes(kind)) &&
    any(m.severities, (s) => s === incident.severity) &&
    any(m.environments, (e) => e === incident.environment) &&
    any(m.services, (s) => s === incident.service) &&
    any(m.destinations, (prefix) => destination !== undefined && prefixWithin(hostRoute(destination) ?? '', prefix))
  );
}

/**
 * The enabled playbooks whose match holds for the incident, in document
 * order. A playbook with a network action (blackhole, flowspec_*) matches
 * only an incident whose destination is an IP address.
 */
export function matchingPlaybooks(playbooks: readonly Playbook[], incident: IncidentFacts): Playbook[] {
  const destination = incidentDestination(incident);
  return playbooks.filter(
    (p) => p.enabled && (destination !== undefined || !hasNetworkAction(p)) && matchHolds(p.match, incident, destination),
  );
}

/**
 * Who wrote a playbook as it stands in the latest of `versions` (oldest
 * first): the actor of the earliest version from which it is unchanged. An
 * automation run's four-eyes rule keeps that person from deciding it, however
 * many others edited other playbooks of the document since.
 */
export function playbookAuthor(versions: readonly VersionedPlaybooks[], playbookId: string): Pick<VersionedPlaybooks, 'actor' | 'actor_person'> | undefined {
  const text = (v: VersionedPlaybooks) => {
    const p = v.playbooks.find((x) => x.id === playbookId);
    return p === undefined ? undefined : canonicalJson(p);
  };
  const latest = versions.at(-1);
  const current = latest && text(latest);
  if (current === undefined) return undefined;
  let author = latest!;
  for (let i = versions.length - 2; i >= 0 && text(versions[i]!) === current; i -= 1) author = versions[i]!;
  return { actor: author.actor, actor_person: author.actor_person };
}

/** What the operator lets a workspace's blackhole carry (BGP_ALLOWED_COMMUNITIES, BGP_ALLOWED_NEXT_HOPS and the default next hops). */
export interface OperatorBounds {
  communities: readonly string[];
  nextHops: readonly string[];
}

/**
 * The blackhole communities and next hops the operator did not allow, each
 * named by its path: a community can steer the routers and a next hop sends
 * the destination's traffic elsewhere, so neither is a workspace's to choose.
 */
export function outsideOperatorBounds(playbooks: readonly Playbook[], bounds: OperatorBounds): Array<{ path: string; message: string }> {
  return playbooks.flatMap((p, i) =>
    p.actions.flatMap((a, j) => {
      if (a.type !== 'blackhole') return [];
      const at = `playbooks.${i}.actions.${j}`;
      const communities = a.communities.flatMap((c, k) =>
        c === '65535:666' || bounds.communities.includes(c) ? [] : [{ path: `${at}.communities.${k}`, message: `community ${c} is not one the operator allows (BGP_ALLOWED_COMMUNITIES)` }],
      );
      const nextHop = a.next_hop !== null && !bounds.nextHops.includes(a.next_hop) ? [{ path: `${at}.next_hop`, message: `next hop ${a.next_hop} is not one the operator allows (BGP_ALLOWED_NEXT_HOPS)` }] : [];
      return [...communities, ...nextHop];
    }),
  );
}
