import http from 'node:http';
import type { Duplex } from 'node:stream';

export interface HttpServerConfig {
  host: string;
  /** 0 picks a free port; `boundPort` tells which. */
  port: number;
  /** Headers must arrive within this: a stalled client cannot hold a socket open for long. */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

export const defaultHttpServerConfig: HttpServerConfig = {
  host: '0.0.0.0',
  port: 8080,
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 120_000,
  keepAliveTimeoutMs: 65_000,
};

/** The listening socket of the API; the handler is the Koa app's callback. */
export class HttpServer {
  private server?: http.Server;
  private port: number;

  constructor(
    private readonly config: HttpServerConfig,
    private readonly handler: http.RequestListener,
  ) {
    this.port = config.port;
  }

  async start(): Promise<void> {
    const server = http.createServer({ keepAliveTimeout: this.config.keepAliveTimeoutMs }, this.handler);
    server.on('clientError', answerClientError);
    server.headersTimeout = this.config.headersTimeoutMs;
    server.requestTimeout = this.config.requestTimeoutMs;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, this.config.host, () => resolve());
    });
    this.server = server;
    const address = server.address();
    if (address && typeof address === 'object') this.port = address.port;
  }

  get boundPort(): number {
    return this.port;
  }

  /** The address clients reach: a wildcard bind is shown as loopback. */
  get url(): string {
    const host = this.config.host === '0.0.0.0' ? '127.0.0.1' : this.config.host;
    return `http://${host}:${this.port}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
  }
}

/**
 * Requests Node's parser rejects before Koa sees them (junk headers, oversized
 * header blocks) still get the error body.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request';
  const body = JSON.stringify({
    error: tooLarge
      ? { code: 'HEADERS_TOO_LARGE', message: 'request headers are too large' }
      : { code: 'VALIDATION_ERROR', message: 'malformed HTTP request' },
  });
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
