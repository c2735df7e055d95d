import path from 'node:path';
import { z } from 'zod';
import { TrustedProxies } from '../core/client-address';
import { commaList, defineSettings, integer, optionalSecret, port, setting } from '../core/settings';

const validProxies = (list: string[]) => {
  try {
    return Boolean(new TrustedProxies(list));
  } catch {
    return false;
  }
};

/** The HTTP API's door: where it listens, how long a client may take, who it trusts, and the console it serves. */
export const apiSettings = defineSettings(
  'The HTTP API',
  {
    PORT: setting(port(0).default(8080), 'HTTP port of the API'),
    HOST: setting(z.string().default('0.0.0.0'), 'address the API binds'),
    ADMIN_API_KEY: setting(
      optionalSecret('ADMIN_API_KEY', 16),
      'the platform admin key (≥ 16 characters). Unset: `npm start` generates one, prints it that once, and keeps it in `$DATA_DIR/admin-api-key` (mode 0600); later starts name the file, never the key',
      'generated',
    ),
    BODY_LIMIT_BYTES: setting(z.coerce.number().int().positive().default(10 * 1024 * 1024), 'largest request body (after gzip/deflate inflation)'),
    HTTP_HEADERS_TIMEOUT_MS: setting(
      integer(100, 600_000).default(20_000),
      "a request's headers must arrive within this; else 408 `REQUEST_TIMEOUT` and the socket is closed (see [the HTTP door](security/http.md))",
    ),
    HTTP_REQUEST_TIMEOUT_MS: setting(integer(100, 3_600_000).default(120_000), 'all of a request must arrive within this; else 408 `REQUEST_TIMEOUT` and the socket is closed'),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: setting(integer(100, 600_000).default(65_000), "an idle kept-alive connection is closed after this (above a load balancer's usual 60 s)"),
    HTTP_SHUTDOWN_GRACE_MS: setting(
      integer(0, 600_000).default(10_000),
      'on stop, how long requests in progress may take to finish; then the connections still open (a client that never finishes its request) are closed',
    ),
    HTTP_MAX_CONNECTIONS: setting(integer(1, 1_000_000).default(10_000), 'sockets the API holds at once; past it a new one is closed at once. Keep it under `ulimit -n`'),
    AUTH_FAILURES_PER_MINUTE: setting(
      integer(0).default(20),
      'failed authentications one client address may make per minute (and at once); past it, 429 `RATE_LIMITED` with `Retry-After`. `0`: off',
    ),
    TRUSTED_PROXIES: setting(
      commaList().refine(validProxies, 'TRUSTED_PROXIES: addresses or CIDR ranges, comma-separated'),
      "reverse proxies (addresses or CIDR ranges, comma-separated) whose `X-Forwarded-For` names the client; empty, the client is the socket's peer",
    ),
    METRICS_TOKEN: setting(
      optionalSecret('METRICS_TOKEN', 32),
      'the bearer (≥ 32 characters) a Prometheus scraper presents on `/metrics`; the platform admin key reads them too, nothing else does',
    ),
    CONSOLE_DIR: setting(z.string().default('dist/console'), 'the built console the API serves at `/`'),
  },
  (e) => ({
    http: {
      host: e.HOST,
      port: e.PORT,
      bodyLimitBytes: e.BODY_LIMIT_BYTES,
      /** Slow clients: headers, then the whole request, must arrive within these; an idle kept-alive socket closes after the third. */
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      shutdownGraceMs: e.HTTP_SHUTDOWN_GRACE_MS,
      /** Open sockets the API accepts at once (keep it under `ulimit -n`); past it new ones are closed. */
      maxConnections: e.HTTP_MAX_CONNECTIONS,
    },
    /**
     * Failed authentication: per client address, taken from the socket or, behind these proxies, X-Forwarded-For.
     * `metricsToken`: the bearer a Prometheus scraper presents on /metrics (the platform admin key works too).
     */
    auth: { failuresPerMinute: e.AUTH_FAILURES_PER_MINUTE, trustedProxies: e.TRUSTED_PROXIES, metricsToken: e.METRICS_TOKEN },
    adminApiKey: e.ADMIN_API_KEY,
    /** The browser console's built assets (the set-up builds them with Vite). */
    console: { dir: path.resolve(e.CONSOLE_DIR) },
  }),
);
