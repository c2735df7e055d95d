import { zodIssueDetails } from '../../core/errors';
import { incidentDestination, matchingPlaybooks, outsideOperatorBounds, playbookAuthor, playbooksSchema, type IncidentFacts, type Playbook } from '../../core/playbooks';

const blackhole = { type: 'blackhole', duration_minutes: 30 };
const webhook = { type: 'webhook' };

/** The validation details the API answers with, for a document of one playbook with these actions. */
function problemsOf(playbook: Record<string, unknown>) {
  const result = playbooksSchema.safeParse({ playbooks: [{ id: 'pb', name: 'pb', actions: [webhook], ...playbook }] });
  return result.success ? [] : zodIssueDetails(result.error).map((d) => d.path);
}

const playbook = (over: Record<string, unknown> = {}): Playbook =>
  playbooksSchema.parse({ playbooks: [{ id: 'pb', name: 'pb', actions: [webhook], ...over }] }).playbooks[0]!;

const incident = (over: Partial<IncidentFacts> = {}): IncidentFacts => ({
  rule: 'traffic_volume>=1000000B/min',
  kinds: ['flow'],
  severity: 'high',
  environment: 'network',
  service: '198.51.100.7',
  ...over,
});

const matches = (p: Playbook, i: IncidentFacts = incident()) => matchingPlaybooks([p], i).length === 1;

describe('the playbooks document', () => {
  test('a playbook given with its required fields only gets every default', () => {
    expect(playbook({ actions: [blackhole, { type: 'flowspec_discard', duration_minutes: 5, protocols: ['udp', 6] }] })).toEqual({
      id: 'pb',
      name: 'pb',
      enabled: true,
      match: { rules: [], kinds: [], severities: [], environments: [], services: [], destinations: [] },
      actions: [
        { type: 'blackhole', duration_minutes: 30, communities: [], next_hop: null },
        { type: 'flowspec_discard', duration_minutes: 5, protocols: [17, 6], source_ports: [], destination_ports: [], tcp_flags: [], packet_length: null },
      ],
    });
  });

  test('a fingerprint action gets its shares by default: 90 % of the attack covered, at most 10 % of the normal traffic', () => {
    expect(playbook({ actions: [{ type: 'flowspec_fingerprint', duration_minutes: 15 }] }).actions).toEqual([
      { type: 'flowspec_fingerprint', duration_minutes: 15, attack_share: 0.9, baseline_share: 0.1 },
    ]);
  });

  test("a fingerprint action's shares outside their bounds, or a filter written on it, are refused naming the field", () => {
    expect(problemsOf({ actions: [{ type: 'flowspec_fingerprint', duration_minutes: 15, attack_share: 0.4, baseline_share: 0.6 }] })).toEqual([
      'playbooks.0.actions.0.attack_share',
      'playbooks.0.actions.0.baseline_share',
    ]);
    expect(problemsOf({ actions: [{ type: 'flowspec_fingerprint', duration_minutes: 15, protocols: [6] }] })).toEqual(['playbooks.0.actions.0']);
  });

  test('a network action may be held until its attack ends; a webhook may not', () => {
    expect(playbook({ actions: [{ ...blackhole, until_attack_ends: true }] }).actions[0]).toMatchObject({ until_attack_ends: true });
    expect(playbook({ actions: [blackhole] }).actions[0]).not.toHaveProperty('until_attack_ends');
    expect(problemsOf({ actions: [{ type: 'webhook', until_attack_ends: true }] })).toEqual(['playbooks.0.actions.0']);
  });

  test('an unknown action type is refused naming the type', () => {
    expect(problemsOf({ actions: [{ type: 'nuke' }] })).toEqual(['playbooks.0.actions.0.type']);
  });

  test('an unknown field is refused naming the object that has it', () => {
    expect(problemsOf({ actions: [{ ...blackhole, protocols: [6] }] })).toEqual(['playbooks.0.actions.0']);
    expect(problemsOf({ colour: 'red' })).toEqual(['playbooks.0']);
  });

  test('a duration of 0 or 10081 minutes is refused naming the field', () => {
    expect(problemsOf({ actions: [{ ...blackhole, duration_minutes: 0 }, { ...blackhole, duration_minutes: 10_081 }] })).toEqual([
      'playbooks.0.actions.0.duration_minutes',
      'playbooks.0.actions.1.duration_minutes',
    ]);
  });

  test('a community that is not two 16-bit numbers is refused naming it', () => {
    expect(problemsOf({ actions: [{ ...blackhole, communities: ['65535:666', '65536:1', 'no-export'] }] })).toEqual([
      'playbooks.0.actions.0.communities.1',
      'playbooks.0.actions.0.communities.2',
    ]);
  });

  test('a port of 70000 is refused naming it', () => {
    expect(problemsOf({ actions: [{ type: 'flowspec_discard', duration_minutes: 5, destination_ports: [53, 70_000] }] })).toEqual([
      'playbooks.0.actions.0.destination_ports.1',
    ]);
  });

  test('a packet length whose min exceeds its max, or a rate of 0, is refused naming the field', () => {
    const action = { type: 'flowspec_rate_limit', duration_minutes: 5, rate_bytes_per_second: 0, packet_length: { min: 1500, max: 64 } };
    expect(problemsOf({ actions: [action] })).toEqual(['playbooks.0.actions.0.rate_bytes_per_second', 'playbooks.0.actions.0.packet_length.min']);
  });

  test('TCP flags are taken by name and kept as given', () => {
    const action = playbook({ actions: [{ type: 'flowspec_discard', duration_minutes: 5, protocols: ['tcp'], tcp_flags: ['syn', 'fin'] }] }).actions[0];
    expect(action).toMatchObject({ protocols: [6], tcp_flags: ['syn', 'fin'] });
  });

  test('an unknown TCP flag, or one given twice, is refused naming it', () => {
    expect(problemsOf({ actions: [{ type: 'flowspec_discard', duration_minutes: 5, tcp_flags: ['syn', 'xmas', 'ack', 'syn'] }] })).toEqual([
      'playbooks.0.actions.0.tcp_flags.1',
    ]);
    expect(problemsOf({ actions: [{ type: 'flowspec_discard', duration_minutes: 5, tcp_flags: ['syn', 'ack', 'syn'] }] })).toEqual([
      'playbooks.0.actions.0.tcp_flags.2',
    ]);
  });

  test('TCP flags are refused naming the field unless the protocols are empty or hold tcp', () => {
    const withProtocols = (protocols: unknown[]) => problemsOf({ actions: [{ type: 'flowspec_rate_limit', duration_minutes: 5, rate_bytes_per_second: 1000, protocols, tcp_flags: ['syn'] }] });
    expect(withProtocols(['udp'])).toEqual(['playbooks.0.actions.0.tcp_flags']);
    expect(withProtocols([])).toEqual([]);
    expect(withProtocols(['udp', 6])).toEqual([]);
  });

  test('a next hop that is not an address, or a destination that is not a prefix, is refused naming it', () => {
    expect(problemsOf({ actions: [{ ...blackhole, next_hop: 'router-1' }], match: { destinations: ['198.51.100.0/24', '198.51.100.7'] } })).toEqual([
      'playbooks.0.match.destinations.1',
      'playbooks.0.actions.0.next_hop',
    ]);
  });

  test('duplicate ids are refused naming the second', () => {
    const result = playbooksSchema.safeParse({ playbooks: [{ id: 'a', name: 'one', actions: [webhook] }, { id: 'a', name: 'two', actions: [webhook] }] });
    expect(result.success ? [] : zodIssueDetails(result.error)).toEqual([{ path: 'playbooks.1.id', message: 'the id a is given twice' }]);
  });

  test('a playbook without actions, or with nine, is refused', () => {
    expect(problemsOf({ actions: [] })).toEqual(['playbooks.0.actions']);
    expect(problemsOf({ actions: Array.from({ length: 9 }, () => webhook) })).toEqual(['playbooks.0.actions']);
  });

  test('at most 64 playbooks', () => {
    const many = (n: number) => ({ playbooks: Array.from({ length: n }, (_, i) => ({ id: `p${i}`, name: 'p', actions: [webhook] })) });
    expect(playbooksSchema.safeParse(many(64)).success).toBe(true);
    expect(playbooksSchema.safeParse(many(65)).success).toBe(false);
  });
});

describe('matching incidents', () => {
  test('a playbook with an empty match takes every incident; a disabled one takes none', () => {
    expect(matches(playbook())).toBe(true);
    expect(matches(playbook({ enabled: false }))).toBe(false);
  });

  test('rules match by name, with or without the bound', () => {
    expect(matches(playbook({ match: { rules: ['traffic_volume'] } }))).toBe(true);
    expect(matches(playbook({ match: { rules: ['traffic_volume>=1000000B/min'] } }))).toBe(true);
    expect(matches(playbook({ match: { rules: ['traffic_volume>=1000000B/min'] } }), incident({ rule: 'traffic_volume[exporter=192.0.2.1]>=5B/min' }))).toBe(false);
    expect(matches(playbook({ match: { rules: ['traffic_vol'] } }))).toBe(false);
    expect(matches(playbook({ match: { rules: ['signal'] } }))).toBe(false);
  });

  test('kinds match when the incident carries one of them', () => {
    expect(matches(playbook({ match: { kinds: ['dns', 'flow'] } }), incident({ kinds: ['bgp', 'flow'] }))).toBe(true);
    expect(matches(playbook({ match: { kinds: ['dns'] } }))).toBe(false);
  });

  test('severities, environments and services match exactly', () => {
    expect(matches(playbook({ match: { severities: ['critical'] } }), incident({ severity: 'critical' }))).toBe(true);
    expect(matches(playbook({ match: { severities: ['critical'] } }))).toBe(false);
    expect(matches(playbook({ match: { environments: ['network'] } }))).toBe(true);
    expect(matches(playbook({ match: { environments: ['prod'] } }))).toBe(false);
    expect(matches(playbook({ match: { services: ['198.51.100.7'] } }))).toBe(true);
    expect(matches(playbook({ match: { services: ['edge'] } }))).toBe(false);
  });

  test('every match list given must hold', () => {
    expect(matches(playbook({ match: { environments: ['network'], severities: ['critical'] } }))).toBe(false);
  });

  test('a destination matches when the incident address lies within one of the prefixes, in either family', () => {
    expect(matches(playbook({ match: { destinations: ['203.0.113.0/24', '198.51.100.0/24'] } }))).toBe(true);
    expect(matches(playbook({ match: { destinations: ['198.51.100.0/25'] } }), incident({ service: '198.51.100.200' }))).toBe(false);
    expect(matches(playbook({ match: { destinations: ['2001:db8::/32'] } }), incident({ service: '2001:DB8::1' }))).toBe(true);
    expect(matches(playbook({ match: { destinations: ['198.51.100.0/24'] } }), incident({ service: 'edge' }))).toBe(false);
  });

  test('a playbook with a fingerprint action, a network action, does not match an incident whose service is not an address', () => {
    const fingerprinting = playbook({ actions: [{ type: 'flowspec_fingerprint', duration_minutes: 15 }] });
    expect(matches(fingerprinting, incident({ service: 'edge' }))).toBe(false);
    expect(matches(fingerprinting)).toBe(true);
  });

  test('a playbook with a network action does not match an incident whose service is not an address; a webhook-only one does', () => {
    const edge = incident({ service: 'edge', environment: 'prod' });
    expect(matches(playbook({ actions: [webhook, blackhole] }), edge)).toBe(false);
    expect(matches(playbook({ actions: [{ type: 'flowspec_discard', duration_minutes: 5 }] }), edge)).toBe(false);
    expect(matches(playbook({ actions: [webhook] }), edge)).toBe(true);
    expect(matches(playbook({ actions: [blackhole] }))).toBe(true);
  });

  test('matching playbooks come in document order', () => {
    const list = playbooksSchema.parse({
      playbooks: [
        { id: 'b', name: 'b', actions: [webhook] },
        { id: 'a', name: 'a', match: { severities: ['critical'] }, actions: [webhook] },
        { id: 'c', name: 'c', actions: [blackhole] },
      ],
    }).playbooks;
    expect(matchingPlaybooks(list, incident()).map((p) => p.id)).toEqual(['b', 'c']);
  });

  test("the incident's destination is its service when that is an address, normalized", () => {
    expect(incidentDestination({ service: '198.51.100.7' })).toBe('198.51.100.7');
    expect(incidentDestination({ service: '::ffff:198.51.100.7' })).toBe('198.51.100.7');
    expect(incidentDestination({ service: '2001:DB8:0::1' })).toBe('2001:db8::1');
    expect(incidentDestination({ service: 'edge' })).toBeUndefined();
  });
});

describe('who wrote a playbook, for the four-eyes rule', () => {
  const pb = (id: string, minutes: number) => ({ id, name: id, enabled: true, match: { rules: [], kinds: [], severities: [], environments: [], services: [], destinations: [] }, actions: [{ type: 'webhook' as const }, { type: 'flowspec_discard' as const, duration_minutes: minutes, protocols: [], source_ports: [], destination_ports: [], packet_length: null, tcp_flags: [] }] });
  const person = (actor: string) => ({ subject: `person-of-${actor}`, name: '', email: '' });
  const version = (n: number, actor: string, playbooks: ReturnType<typeof pb>[]) => ({ version: n, playbooks, created_at: n, actor, actor_person: person(actor) });
  const by = (actor: string) => ({ actor, actor_person: person(actor) });

  test('is the actor (and its person) of the version that last changed it, not of a later edit of another playbook', () => {
    const versions = [version(1, 'key_a', [pb('rtbh', 10)]), version(2, 'key_b', [pb('rtbh', 10), pb('ntp', 5)]), version(3, 'key_c', [pb('rtbh', 10), pb('ntp', 6)])];
    expect(playbookAuthor(versions, 'rtbh')).toEqual(by('key_a'));
    expect(playbookAuthor(versions, 'ntp')).toEqual(by('key_c'));
  });

  test('is the actor of the latest change even when an earlier version held the same playbook', () => {
    const versions = [version(1, 'key_a', [pb('rtbh', 10)]), version(2, 'key_b', [pb('rtbh', 20)]), version(3, 'key_c', [pb('rtbh', 10)])];
    expect(playbookAuthor(versions, 'rtbh')).toEqual(by('key_c'));
  });

  test('is unknown for a playbook the latest version does not hold', () => {
    expect(playbookAuthor([version(1, 'key_a', [pb('rtbh', 10)])], 'ntp')).toBeUndefined();
    expect(playbookAuthor([], 'rtbh')).toBeUndefined();
  });
});

describe("a blackhole's communities and next hop, within what the operator allows", () => {
  const blackhole = (communities: string[], nextHop: string | null) => ({
    id: 'rtbh', name: 'rtbh', enabled: true, match: { rules: [], kinds: [], severities: [], environments: [], services: [], destinations: [] },
    actions: [{ type: 'webhook' as const }, { type: 'blackhole' as const, duration_minutes: 10, communities, next_hop: nextHop }],
  });
  const bounds = { communities: ['65010:1'], nextHops: ['192.0.2.1', '100::1'] };

  test('an allowed community, BLACKHOLE itself and a default or allowed next hop pass', () => {
    expect(outsideOperatorBounds([blackhole(['65010:1', '65535:666'], '192.0.2.1'), blackhole([], null)], bounds)).toEqual([]);
  });

  test('a community or a next hop the operator did not allow is named by its path', () => {
    expect(outsideOperatorBounds([blackhole(['65010:1', '65000:120'], '203.0.113.66')], bounds)).toEqual([
      { path: 'playbooks.0.actions.1.communities.1', message: 'community 65000:120 is not one the operator allows (BGP_ALLOWED_COMMUNITIES)' },
      { path: 'playbooks.0.actions.1.next_hop', message: 'next hop 203.0.113.66 is not one the operator allows (BGP_ALLOWED_NEXT_HOPS)' },
    ]);
  });
});
