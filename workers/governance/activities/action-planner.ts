import { fingerprintRuleOf, hostRoute, isPlannable, mitigationOf, previewFilterOfMitigation, type ActionPreview, type ActionSpec, type PlannableSpec, type PlannedAction } from '../../../core/automation-plan';
import { defaultFingerprintSettings, fingerprint } from '../../../core/detection/fingerprint';
import { parseAddressRange } from '../../../core/flow-query';
import type { Incident } from '../../../core/correlation';
import { mitigationActions } from '../../../core/mitigation-policy';
import { mitigationDestination, type Mitigation } from '../../../core/mitigation';
import { incidentDestination, type OperatorBounds } from '../../../core/playbooks';
import type { ClickHouse } from '../../../storage/clickhouse';
import { flowShapes, previewVolumes } from '../../../storage/mitigation-preview';

/**
 * A playbook's actions planned on an incident, each with what it would have
 * matched in the stored flows of a window: what an automation run shows its
 * approvers (the last minutes), and what a replay reports its playbooks
 * would have done (the replay's window).
 */
export interface ActionPlannerDeps {
  clickhouse: ClickHouse;
  /** A blackhole's next hop when its action names none. */
  blackholeNextHop: { ipv4: string; ipv6: string };
  /** What a blackhole may carry: checked again here, since the operator may have narrowed it after the playbook was written. */
  operatorBounds: OperatorBounds;
}

/** What a planned mitigation would have matched in the stored flows of `window` (two statements). */
async function preview(deps: ActionPlannerDeps, orgId: string, mitigation: Mitigation, window: { from: number; to: number }): Promise<ActionPreview | null> {
  const filter = previewFilterOfMitigation(mitigation);
  if (!filter) return null;
  const seconds = Math.max(1, (window.to - window.from) / 1000);
  const v = await previewVolumes(deps.clickhouse, orgId, filter, window);
  const bps = (bytes: number) => Math.round((bytes * 8) / seconds);
  const share = (bytes: number) => (v.destinationBytes ? bytes / v.destinationBytes : 0);
  return {
    window_minutes: Math.round(seconds / 60),
    destination_bits_per_second: bps(v.destinationBytes),
    matched_bits_per_second: bps(v.matchedBytes),
    matched_packets_per_second: Math.round(v.matchedPackets / seconds),
    share: share(v.matchedBytes),
    top_sources: v.topSources.map((s) => ({ src_ip: s.src_ip, bits_per_second: bps(s.bytes), share: share(s.bytes) })),
    approximate: v.matchedMultiPacketFlows > 0,
  };
}

/**
 * The planned actions, each network action with its preview on the stored
 * flows of `window`: of the mitigation it carries, the rule the run announces
 * (a fingerprint's as it was planned, never fingerprinted again on later
 * flows). Reads nothing but the previews' statements, two per network action.
 */
export async function previewPlanned(deps: ActionPlannerDeps, orgId: string, actions: readonly PlannedAction[], window: { from: number; to: number }): Promise<PlannedAction[]> {
  return Promise.all(actions.map(async (a) => (a.mitigation ? { ...a, preview: await preview(deps, orgId, a.mitigation, window) } : a)));
}

/** Why a blackhole's communities or next hop are outside what the operator allows, if they are. */
function operatorRefusal(spec: ActionSpec, bounds: OperatorBounds): string | undefined {
  const community = (spec.communities ?? []).find((c) => c !== '65535:666' && !bounds.communities.includes(c));
  if (community) return `community ${community} is not one the operator allows (BGP_ALLOWED_COMMUNITIES)`;
  if (spec.next_hop && !bounds.nextHops.includes(spec.next_hop)) return `next hop ${spec.next_hop} is not one the operator allows (BGP_ALLOWED_NEXT_HOPS)`;
  return undefined;
}

/** How far before the attack's window the destination's normal traffic is read, for a fingerprint. */
const baselineMs = 60 * 60_000;

/**
 * A fingerprint action's rule: the narrowest Flowspec match that covers the
 * action's share of the attack's packets (the destination's stored flows in
 * `window`, the last minutes by default) and at most its share of the
 * destination's normal traffic (its flows in the hour before), or why there
 * is none within those bounds (a run that cannot find one fails, announcing nothing).
 */
async function fingerprintRule(deps: ActionPlannerDeps, orgId: string, spec: ActionSpec, address: string, window: { from: number; to: number }) {
  const range = parseAddressRange(address);
  const destination = hostRoute(address);
  if (!range || !destination) return `${address} is no address to fingerprint an attack on`;
  const [attack, baseline] = await Promise.all([
    flowShapes(deps.clickhouse, orgId, range, window),
    flowShapes(deps.clickhouse, orgId, range, { from: window.from - baselineMs, to: window.from }),
  ]);
  if (attack.length === 0) return `no stored flows towards ${address} to fingerprint the attack on`;
  const found = fingerprint(destination, attack, baseline, {
    ...defaultFingerprintSettings,
    attackShare: spec.attack_share ?? defaultFingerprintSettings.attackShare,
    baselineShare: spec.baseline_share ?? defaultFingerprintSettings.baselineShare,
  });
  const shares = { attack_share: found.attack_share, baseline_share: found.baseline_share };
  if (!found.within_bounds) {
    return `the attack's fingerprint on ${address} covers ${Math.round(found.attack_share * 100)} % of its packets and ${Math.round(found.baseline_share * 100)} % of the destination's normal traffic: outside the action's bounds, so it is not announced`;
  }
  return { rule: fingerprintRuleOf(spec, found.match), shares };
}

/**
 * The actions planned on the incident's destination (ids `<runId>-<index>`),
 * or why they cannot be: a network action needs the incident's service to be
 * an address.
 */
export async function planActions(
  deps: ActionPlannerDeps,
  runId: string,
  incident: Pick<Incident, 'id' | 'org_id' | 'service'>,
  specs: readonly ActionSpec[],
  /** The stored flows a fingerprint reads as the attack's, and each planned action is previewed on when `preview` is set. */
  window: { from: number; to: number },
  opts: { preview: boolean },
): Promise<PlannedAction[] | string> {
  const address = incidentDestination(incident);
  const actions: PlannedAction[] = [];
  for (const [index, given] of specs.entries()) {
    let spec: PlannableSpec;
    let fingerprinted: PlannedAction['fingerprint'];
    if (isPlannable(given)) spec = given;
    else {
      if (!address) return `incident ${incident.id} has no destination address to act on`;
      const found = await fingerprintRule(deps, incident.org_id, given, address, window);
      if (typeof found === 'string') return found;
      spec = found.rule;
      fingerprinted = found.shares;
    }
    const network = (mitigationActions as readonly string[]).includes(spec.type);
    const mitigation = network && address ? (mitigationOf(spec, address, deps.blackholeNextHop) ?? null) : null;
    if (network && !mitigation) return `incident ${incident.id} has no destination address to act on`;
    const steering = spec.type === 'blackhole' ? operatorRefusal(spec, deps.operatorBounds) : undefined;
    if (steering) return steering;
    actions.push({
      id: `${runId}-${index}`,
      type: spec.type,
      destination: mitigation ? mitigationDestination(mitigation) : null,
      duration_minutes: network ? (spec.duration_minutes ?? 0) : 0,
      mitigation,
      preview: null,
      ...(fingerprinted ? { fingerprint: fingerprinted } : {}),
      ...(network && spec.until_attack_ends ? { until_attack_ends: true as const } : {}),
    });
  }
  return opts.preview ? previewPlanned(deps, incident.org_id, actions, window) : actions;
}
