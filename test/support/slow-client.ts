import net from 'node:net';

/** How a slow connection ended: the status the server answered (0: none), and when the socket closed after it opened. */
export interface SlowOutcome {
  status: number;
  closedAfterMs: number;
}

/**
 * A slowloris client: sends `head`, then trickles one byte of `drip` every
 * `everyMs` until the server answers or closes. Resolves when the socket is
 * closed, by whichever side; `giveUpMs` closes it from this side (and says
 * status -1) so a test never hangs on a server that keeps it open.
 */
export function slowConnection(
  url: string,
  opts: { head: string; drip: string; everyMs: number; giveUpMs: number },
): { connected: Promise<void>; outcome: Promise<SlowOutcome> } {
  const { hostname, port } = new URL(url);
  const socket = net.connect({ host: hostname, port: Number(port) });
  const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()).once('close', () => resolve()));
  const outcome = new Promise<SlowOutcome>((resolve) => {
    const openedAt = Date.now();
    let received = '';
    let timer: NodeJS.Timeout | undefined;
    const giveUp = setTimeout(() => {
      received = 'HTTP/1.1 -1 gave up';
      socket.destroy();
    }, opts.giveUpMs);
    socket.on('connect', () => {
      socket.write(opts.head);
      timer = setInterval(() => {
        if (socket.writable) socket.write(opts.drip);
      }, opts.everyMs);
    });
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve({ status: Number(/^HTTP\/1\.1 (-?\d+)/.exec(received)?.[1] ?? 0), closedAfterMs: Date.now() - openedAt });
    });
  });
  return { connected, outcome };
}

/** Runs `work` over `items` with at most `concurrency` at once, keeping the order of the results. */
export async function pooled<T, R>(items: readonly T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  });
  await Promise.all(runners);
  return results;
}
