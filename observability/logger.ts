import pino from 'pino';

export type Logger = pino.Logger;

/**
 * Structured JSON logs on stderr. Authorization headers and anything named
 * like a secret are redacted, so a key never reaches a log line.
 */
export function createLogger(level: string, name = 'nettel', destination: pino.DestinationStream = pino.destination(2)): Logger {
  return pino(
    {
      name,
      level,
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'key', 'secret', '*.key', '*.secret'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
