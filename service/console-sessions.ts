import { loginAttemptMs, type SessionLimits } from '../core/session';
import type { NatsClient } from '../streams/nats-client';
import { names } from '../streams/names';
import { SessionBucket } from '../streams/session-bucket';
import type { Config } from './config';

/** The sessions' time-outs in milliseconds, from SESSION_IDLE_MINUTES and SESSION_MAX_HOURS. */
export const sessionLimitsOf = (config: Config): SessionLimits => ({ idleMs: config.sessions.idleMinutes * 60_000, maxMs: config.sessions.maxHours * 3_600_000 });

/** The bucket the console's sessions live in, as the api role and the topology job open it. */
export const sessionBucketOf = (config: Config, nats: NatsClient) =>
  new SessionBucket({ nats, name: names(config.nats.prefix).sessionsBucket, replicas: config.nats.replicas, ttlMs: sessionLimitsOf(config).maxMs });

/**
 * The bucket of sign-ins under way: `GET /auth/login` writes one without
 * authentication, so its entries live only as long as a sign-in may take and
 * the whole is bounded in bytes (SESSION_SIGN_INS_MAX_BYTES).
 */
export const signInBucketOf = (config: Config, nats: NatsClient) =>
  new SessionBucket({ nats, name: names(config.nats.prefix).signInsBucket, replicas: config.nats.replicas, ttlMs: loginAttemptMs, maxBytes: config.sessions.signInsMaxBytes });
