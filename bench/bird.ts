import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { requireExecutable } from '../engines/binaries';
import { LocalProcess } from '../engines/local-process';
import type { Logger } from '../observability/logger';

const run = promisify(execFile);

/**
 * BIRD 2 (Debian's bird2) as the router the tests and the bench peer the BGP
 * speaker with: in the foreground, on its own control socket, listening on one
 * loopback address only (`strict bind`), with the unicast and flowspec
 * families. Its log traces every route the speaker adds or removes, stamped
 * to the millisecond by BIRD's own clock (what the bench times routes by).
 */
export interface BirdOptions {
  dir: string;
  binPath: readonly string[];
  address: string;
  port: number;
  asn: number;
  speaker: { address: string; port: number; asn: number };
  /** The RTBH next hop, resolved to discard by a static blackhole route. */
  discardNextHop: string;
  /** IPv4 prefixes this router announces to the speaker (static, discard), as a router with routes of its own would; none unless given. */
  announce?: string[];
}

/**
 * The next hop of the routes a router announces (`announce`): gobgpd treats
 * a route whose next hop is a loopback address as withdrawn (RFC 7606), and
 * the routers peer over loopback, so they name a documentation address.
 */
export const announcedNextHop = '192.0.2.254';

/** The table BIRD keeps IPv4 flowspec rules in. */
export const birdFlowTable = 'flowtab4';
/** The table BIRD keeps IPv6 flowspec rules in (RFC 8956). */
export const birdFlowTable6 = 'flowtab6';

export function birdConfigText(o: BirdOptions): string {
  const announced = (o.announce ?? []).map((prefix) => `route ${prefix} blackhole;`).join(' ');
  return `router id ${o.address};
timeformat log "%s.%3f";
log "${birdEventsLog(o.dir)}" all;
protocol device { }
flow4 table ${birdFlowTable};
flow6 table ${birdFlowTable6};
protocol static discard4 { ipv4; route ${o.discardNextHop}/32 blackhole; }
${announced ? `protocol static announced4 { ipv4; ${announced} }\n` : ''}protocol bgp speaker {
  local ${o.address} port ${o.port} as ${o.asn};
  neighbor ${o.speaker.address} port ${o.speaker.port} as ${o.speaker.asn};
  multihop;
  strict bind yes;
  hold time 9;
  connect retry time 1;
  debug { routes };
  ipv4 { import all; ${announced ? `export where proto = "announced4"; next hop address ${announcedNextHop};` : 'export none;'} };
  ipv6 { import all; export none; };
  flow4 { table ${birdFlowTable}; import all; export none; };
  flow6 { table ${birdFlowTable6}; import all; export none; };
}
`;
}

/** BIRD's log: its events, and a line for each route the speaker adds or removes. */
export function birdEventsLog(dir: string): string {
  return path.join(path.resolve(dir), 'bird-events.log');
}

/** A route the speaker added to or removed from one of BIRD's tables, at BIRD's time (ms since the epoch). */
export interface BirdRouteEvent {
  at: number;
  change: 'added' | 'removed';
  /** The route's net: a prefix, or a Flowspec rule as BIRD writes it (`flow4 { dst 198.18.0.10/32; proto 17; }`). */
  prefix: string;
}

/**
 * `1795820511.790 <TRACE> speaker.ipv4 > added [best] 198.51.100.9/32 0L 3G blackhole`, as `debug { routes }` and the
 * log's time format write it; a Flowspec route's net is its whole rule, `flow4 { dst 198.18.0.10/32; proto 17; … }`.
 */
const routeTrace = /^(\d+\.\d{3}) <TRACE> \S+ > (added|removed) \[\w+\] (flow[46] \{[^}]*\}|\S+)/;

/** Every route change BIRD's log holds so far, oldest first. */
export function birdRouteEvents(dir: string): BirdRouteEvent[] {
  const file = birdEventsLog(dir);
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').flatMap((line) => {
    const m = routeTrace.exec(line);
    return m ? [{ at: Math.round(Number(m[1]) * 1000), change: m[2] as BirdRouteEvent['change'], prefix: m[3]! }] : [];
  });
}

export function birdSocket(dir: string): string {
  return path.join(path.resolve(dir), 'bird.ctl');
}

export function localBird(o: BirdOptions, log: Logger): LocalProcess {
  const dir = path.resolve(o.dir);
  fs.mkdirSync(dir, { recursive: true });
  const conf = path.join(dir, 'bird.conf');
  fs.writeFileSync(conf, birdConfigText(o));
  const socket = birdSocket(dir);
  return new LocalProcess(
    {
      name: 'bird',
      command: requireExecutable('bird', o.binPath, 'run `node scripts/setup.mjs bgp` as root on Debian'),
      args: ['-f', '-c', conf, '-s', socket],
      dir,
      port: o.port,
      isReady: () => birdc(socket, o.binPath, ['show', 'status']).then((out) => out.includes('Daemon is up')),
      startTimeoutMs: 10_000,
    },
    log,
  );
}

/** Runs one birdc command on BIRD's control socket and returns its text. */
export async function birdc(socket: string, binPath: readonly string[], args: string[]): Promise<string> {
  const command = requireExecutable('birdc', binPath, 'run `node scripts/setup.mjs bgp` as root on Debian');
  const { stdout } = await run(command, ['-s', socket, ...args], { timeout: 5_000 });
  return stdout;
}
