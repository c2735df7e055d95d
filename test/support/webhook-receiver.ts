import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifySignature } from '../../core/webhook-signature';

/** One request a receiver got, and whether its signature verified under the secret it was given. */
export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  event: { id: string; type: string; subject: string; specversion: string; data: Record<string, unknown> };
  status: number;
}

/** What the receiver answers a request with: a status and optional headers. A never-settling promise hangs it. */
export type Responder = (r: Omit<Received, 'status'>, index: number) => Promise<{ status: number; headers?: Record<string, string> }> | { status: number; headers?: Record<string, string> };

/**
 * A webhook receiver as a test needs one: a real HTTP server on loopback
 * that keeps every request and answers as the test says. It can be stopped
 * and started again on the same port (a receiver down for a while).
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  respond: Responder = () => ({ status: 200 });
  private server?: http.Server;
  port = 0;

  async start(port = this.port): Promise<this> {
    const server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** The requests answered 2xx, one per event id expected. */
  delivered(): Received[] {
    return this.received.filter((r) => r.status >= 200 && r.status < 300);
  }

  verified(r: Received, secret: string): boolean {
    const h = (name: string) => String(r.headers[name] ?? '');
    return verifySignature(secret, { id: h('webhook-id'), timestamp: h('webhook-timestamp'), signature: h('webhook-signature') }, r.body, Math.floor(Date.now() / 1000));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const request = { path: req.url ?? '', headers: req.headers, body, event: JSON.parse(body) as Received['event'] };
    const index = this.received.length;
    const slot: Received = { ...request, status: 0 };
    this.received.push(slot);
    const answer = await this.respond(request, index);
    slot.status = answer.status;
    res.writeHead(answer.status, answer.headers ?? {});
    res.end('ok');
  }
}
