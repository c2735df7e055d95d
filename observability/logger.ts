import pino from 'pino';

export type Logger = pino.Logger;

/** Fields that hold a secret wherever they appear, at the top of a log object or one level down. */
const secretFields = ['authorization', 'key', 'secret', 'password', 'pass', 'token', 'apiKey', 'seed'];
const redactedPaths = ['req.headers.authorization', 'headers.authorization', ...secretFields, ...secretFields.map((f) => `*.${f}`)];

/** The user information of a URL (`scheme://user:password@` or `scheme://token@`), as it sits in a JSON log line. */
const urlCredentials = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#@"\\]+)@/gi;

/**
 * A URL with its password (or token) replaced: `nats://api:[redacted]@host`.
 * Every log line passes through it, whatever field or message carries the URL.
 */
export function withoutUrlCredentials(text: string): string {
  if (!text.includes('@')) return text;
  return text.replace(urlCredentials, (_match, scheme: string, userInfo: string) => {
    const colon = userInfo.indexOf(':');
    return `${scheme}${colon >= 0 ? `${userInfo.slice(0, colon)}:[redacted]` : '[redacted]'}@`;
  });
}

/**
 * Structured JSON logs on stderr. Authorization headers, anything named like
 * a secret, and the credentials inside URLs are redacted, so a key or a
 * password never reaches a log line.
 */
export function createLogger(level: string, name = 'nettel', destination: pino.DestinationStream = pino.destination(2)): Logger {
  return pino(
    {
      name,
      level,
      redact: { paths: redactedPaths, censor: '[redacted]' },
      hooks: { streamWrite: withoutUrlCredentials },
    },
    destination,
  );
}
