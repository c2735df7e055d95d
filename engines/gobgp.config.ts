import net from 'node:net';
import { z } from 'zod';
import { commaList, defineSettings, integer, invalidSetting, optionalAddress, optionalText, port, setting } from '../core/settings';

/** A router the speaker announces mitigations to, as BGP_NEIGHBORS names it. */
export interface NeighbourSetting {
  address: string;
  asn: number;
  /** The router's BGP port; 179 unless given. */
  port: number;
  /**
   * eBGP across more than one hop (TTL 255), the default, as every release
   * before `/direct` existed did; false (`/direct`): a directly connected
   * router, whose session packets leave with a TTL of 1.
   */
  multihop: boolean;
}

/** How a neighbour's session reaches it: the optional suffix after its AS number. */
const hopSuffixes = new Map([
  ['multihop', true],
  ['direct', false],
]);

/**
 * `<address>[:<port>]@<asn>[/multihop|/direct]`, an IPv6 address in brackets
 * when a port follows: `192.0.2.1@65001`, `[2001:db8::1]:1179@65002/direct`.
 */
export function parseNeighbour(text: string): NeighbourSetting | undefined {
  const at = text.lastIndexOf('@');
  const host = text.slice(0, at).trim();
  const [asnText = '', suffix, ...extra] = text.slice(at + 1).trim().split('/');
  if (at < 0 || !/^\d{1,10}$/.test(asnText) || extra.length > 0) return undefined;
  const multihop = suffix === undefined ? true : hopSuffixes.get(suffix);
  if (multihop === undefined) return undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(host);
  const withPort = /^([^:]+):(\d{1,5})$/.exec(host);
  // A bare IPv6 address has colons of its own: a port after one needs the brackets.
  const [address, portText] = bracketed ? [bracketed[1]!, bracketed[2]] : net.isIP(host) ? [host, undefined] : withPort ? [withPort[1]!, withPort[2]] : ['', undefined];
  const portNumber = portText === undefined ? 179 : Number(portText);
  const asn = Number(asnText);
  if (!net.isIP(address) || portNumber < 1 || portNumber > 65535 || asn < 1 || asn > 4_294_967_294) return undefined;
  // The speaker names its neighbours in canonical form: an IPv6 address written otherwise would never be found among them.
  return { address: net.isIPv6(address) ? new URL(`http://[${address}]`).hostname.slice(1, -1) : address, asn, port: portNumber, multihop };
}

const neighbourList = () =>
  commaList().transform((items, ctx) =>
    items.flatMap((item) => {
      const neighbour = parseNeighbour(item);
      if (!neighbour) ctx.addIssue({ code: 'custom', message: `BGP_NEIGHBORS: "${item}" is not <address>[:<port>]@<asn>[/multihop|/direct]` });
      return neighbour ? [neighbour] : [];
    }),
  );

const shape = {
  BGP_SPEAKER_ADDRESS: setting(
    optionalAddress(),
    "`host:port` of the operator's gobgpd gRPC API mitigations are announced through (keep it on loopback or a protected network: gobgpd's API has no authentication); `off`: no speaker, and actions that announce are refused",
    'embedded gobgpd',
  ),
  BGP_SPEAKER_TLS_CA_FILE: setting(optionalText(), "TLS to the speaker named by `BGP_SPEAKER_ADDRESS` (gobgpd --tls): the CA its certificate is checked against"),
  BGP_LOCAL_ASN: setting(integer(1, 4_294_967_294).default(65_010), "the embedded speaker's AS number"),
  BGP_ROUTER_ID: setting(z.string().refine((v) => net.isIPv4(v), 'BGP_ROUTER_ID must be an IPv4 address').default('127.0.0.1'), "the embedded speaker's router id"),
  BGP_NEIGHBORS: setting(
    neighbourList(),
    'the routers the speaker announces to, comma-separated `<address>[:<port>]@<asn>[/multihop|/direct]` (e.g. `192.0.2.1@65001`, `[2001:db8::1]:1179@65002/direct`): eBGP multihop (TTL 255) unless `/direct` names a directly connected router (TTL 1); applied at start and after every speaker restart',
    'none',
  ),
  BGP_NEIGHBOR_MAX_PREFIXES: setting(
    integer(1, 1_000_000).default(100),
    "the most prefixes the speaker takes from a neighbour per address family before it ends the session (max-prefix): the service needs none of a router's routes, and passes none on (it takes and exports only its own)",
  ),
  BGP_HOLD_TIME_SECONDS: setting(integer(3, 65_535).default(9), "the hold time offered to each neighbour: a frozen speaker's routes leave the router after it"),
  EMBEDDED_GOBGP_API_PORT: setting(port().default(15_051), "the embedded gobgpd's gRPC API port, on 127.0.0.1"),
  EMBEDDED_GOBGP_BGP_PORT: setting(port().default(11_179), 'the BGP port the embedded gobgpd listens on, on 127.0.0.1 (a router may connect in)'),
  BGP_BLACKHOLE_NEXT_HOP_V4: setting(
    z.string().refine((v) => net.isIPv4(v), 'BGP_BLACKHOLE_NEXT_HOP_V4 must be an IPv4 address').default('192.0.2.1'),
    "a blackhole route's next hop when its playbook action names none: the address the routers discard to (RFC 7999; a route to null0)",
  ),
  BGP_BLACKHOLE_NEXT_HOP_V6: setting(
    z.string().refine((v) => net.isIPv6(v), 'BGP_BLACKHOLE_NEXT_HOP_V6 must be an IPv6 address').default('100::1'),
    "an IPv6 blackhole route's next hop when its playbook action names none (RFC 6666's discard prefix)",
  ),
  BGP_ALLOWED_COMMUNITIES: setting(
    commaList().refine((items) => items.every((c) => /^\d{1,5}:\d{1,5}$/.test(c)), 'BGP_ALLOWED_COMMUNITIES: each entry is ASN:VALUE'),
    "the communities a workspace's blackhole may attach besides BLACKHOLE (65535:666), comma-separated `ASN:VALUE`: the operator's, since a community can steer the routers (announce upstream, prepend)",
    'none',
  ),
  BGP_ALLOWED_NEXT_HOPS: setting(
    commaList().refine((items) => items.every((a) => net.isIP(a) !== 0), 'BGP_ALLOWED_NEXT_HOPS: each entry is an IP address'),
    "the next hops a workspace's blackhole may name besides the BGP_BLACKHOLE_NEXT_HOP_V4/_V6 defaults, comma-separated: a next hop sends the destination's traffic wherever it points",
    'none',
  ),
  GOBGPD: setting(optionalText(), 'the gobgpd binary the embedded default runs', "Debian's, or the set-up's build"),
};

/** Where the speaker is: unset, the embedded gobgpd; `off`, none; else the operator's, with TLS when a CA is given. */
function speakerOf(address: string | undefined, caFile: string | undefined) {
  if (caFile && (!address || address === 'off')) throw invalidSetting("BGP_SPEAKER_TLS_CA_FILE needs BGP_SPEAKER_ADDRESS: the embedded gobgpd's API stays on loopback without TLS");
  if (address === 'off') return { kind: 'off' } as const;
  if (!address) return { kind: 'embedded' } as const;
  return { kind: 'remote', address, ...(caFile ? { tls: { caFile } } : {}) } as const;
}

/** The BGP speaker mitigations are announced through (engines/gobgp.ts, workers/mitigation/bgp-speaker.ts). */
export const bgpSettings = defineSettings('The BGP speaker', shape, (e) => ({
  bgp: {
    /** Unset: the embedded gobgpd; `off`: none. */
    speaker: speakerOf(e.BGP_SPEAKER_ADDRESS, e.BGP_SPEAKER_TLS_CA_FILE),
    asn: e.BGP_LOCAL_ASN,
    routerId: e.BGP_ROUTER_ID,
    neighbours: e.BGP_NEIGHBORS,
    holdTimeSeconds: e.BGP_HOLD_TIME_SECONDS,
    neighbourMaxPrefixes: e.BGP_NEIGHBOR_MAX_PREFIXES,
    blackholeNextHop: { ipv4: e.BGP_BLACKHOLE_NEXT_HOP_V4, ipv6: e.BGP_BLACKHOLE_NEXT_HOP_V6 },
    /** What a workspace's blackhole may carry: the operator's communities and next hops (the default next hops always). */
    allowed: { communities: e.BGP_ALLOWED_COMMUNITIES, nextHops: [e.BGP_BLACKHOLE_NEXT_HOP_V4, e.BGP_BLACKHOLE_NEXT_HOP_V6, ...e.BGP_ALLOWED_NEXT_HOPS] },
    embeddedApiPort: e.EMBEDDED_GOBGP_API_PORT,
    embeddedBgpPort: e.EMBEDDED_GOBGP_BGP_PORT,
    gobgpd: e.GOBGPD,
  },
}));
