import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Registry } from '../observability/metrics';
import { httpMetrics } from './http-metrics';

export interface HttpServerConfig {
  host: string;
  /** 0 picks a free port; `boundPort` tells which. */
  port: number;
  /**
   * Headers, then the whole request, must arrive within these: a client that
   * trickles bytes (slowloris) holds its socket no longer, and is answered 408.
   */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  /** On stop, how long requests in progress may take before the connections still open are closed. */
  shutdownGraceMs: number;
  /** Sockets open at once; past it Node closes new ones at once. */
  maxConnections: number;
}

/** The listening socket of the API; the handler is the Koa app's callback. */
export class HttpServer {
  private server?: http.Server;
  private port: number;
  private readonly errors;

  constructor(
    private readonly config: HttpServerConfig,
    private readonly handler: http.RequestListener,
    registry: Registry,
  ) {
    this.port = config.port;
    this.errors = httpMetrics(registry).errors;
  }

  async start(): Promise<void> {
    const { headersTimeoutMs, requestTimeoutMs } = this.config;
    const server = http.createServer(
      {
        keepAliveTimeout: this.config.keepAliveTimeoutMs,
        // Node refuses a headers timeout longer than the request's: headers are part of the request.
        headersTimeout: Math.min(headersTimeoutMs, requestTimeoutMs),
        requestTimeout: requestTimeoutMs,
        // Node checks the two timeouts every 30 s by default: a slow socket would outlive its timeout by as much.
        connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(headersTimeoutMs / 4))),
      },
      this.handler,
    );
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
      const code = answerClientError(err, socket);
      if (code) this.errors.inc({ code });
    });
    server.maxConnections = this.config.maxConnections;
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
    // Idle kept-alive sockets close now; requests in progress get the grace, and a client that never
    // finishes its request (it would hold the stop until its headers or request timeout) is cut off after it.
    const cutOff = setTimeout(() => server.closeAllConnections(), this.config.shutdownGraceMs);
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
    clearTimeout(cutOff);
  }
}

const clientErrorAnswers: Record<string, { status: string; code: string; message: string }> = {
  HPE_HEADER_OVERFLOW: { status: '431 Request Header Fields Too Large', code: 'HEADERS_TOO_LARGE', message: 'request headers are too large' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: '408 Request Timeout', code: 'REQUEST_TIMEOUT', message: 'the request did not arrive in time' },
};
const malformed = { status: '400 Bad Request', code: 'VALIDATION_ERROR', message: 'malformed HTTP request' };

/**
 * Requests Node's parser rejects before Koa sees them (junk headers, oversized
 * header blocks, a request that did not arrive within its timeout) still get
 * the error body and the headers every answer carries. Returns the code of
 * the answer, counted like every error answer; none when the client is gone
 * (a reset connection is no error of the client's request).
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): string | undefined {
  // As Node's own handler: a reset or closed socket, or one whose answer has begun (a timeout while Koa read
  // the body answers through Koa), gets no second answer written over it.
  const answering = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || answering?.headersSent) {
    socket.destroy();
    return undefined;
  }
  const answer = clientErrorAnswers[err.code ?? ''] ?? malformed;
  const body = JSON.stringify({ error: { code: answer.code, message: answer.message } });
  socket.end(
    `HTTP/1.1 ${answer.status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
  );
  return answer.code;
}
