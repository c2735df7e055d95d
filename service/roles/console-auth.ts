import type { ConsoleAuth } from '../../api/session-auth';
import type { AuditLedger } from '../../application/audit-ledger';
import { ConsoleLedger } from '../../application/identity/console-ledger';
import { OidcSignIn } from '../../application/identity/oidc-sign-in';
import { SessionPrincipals, type PersonWorkspaces } from '../../application/identity/session-principals';
import { SessionService } from '../../application/identity/session-service';
import type { KeysService } from '../../application/keys-service';
import { counter } from '../../observability/metrics';
import type { Config } from '../config';
import { sessionBucketOf, sessionLimitsOf, signInBucketOf } from '../console-sessions';
import type { Adapters } from './adapters';

/** Single sign-on's part of the console: the provider's sign-in, where OIDC_ISSUER_URL is set. */
function signInOf(config: Config, a: Adapters): { oidc?: OidcSignIn; publicOrigin?: string } {
  const oidc = config.oidc;
  if (!oidc) return {};
  if (!oidc.redirectBaseUrl) {
    // Bearer tokens need only the issuer; the console's sign-in needs the address the provider sends people back to.
    a.log.warn({}, 'OIDC_REDIRECT_BASE_URL is not set: people use bearer tokens, the console offers no single sign-on');
    return {};
  }
  return {
    oidc: new OidcSignIn({ config: oidc, redirectBaseUrl: oidc.redirectBaseUrl, scopes: oidc.scopes, registry: a.registry }),
    publicOrigin: new URL(oidc.redirectBaseUrl).origin,
  };
}

/** The console's sign-in and sessions over this process's adapters; the bucket is a component the api role starts. */
export function consoleAuthOf(config: Config, a: Adapters, deps: { keys: KeysService; access: PersonWorkspaces; audit: AuditLedger }) {
  const bucket = sessionBucketOf(config, a.nats);
  const signIns = signInBucketOf(config, a.nats);
  const consoleAuth: ConsoleAuth = {
    sessions: new SessionService({ store: bucket, signIns, limits: sessionLimitsOf(config), registry: a.registry }),
    principals: new SessionPrincipals({ keys: deps.keys, access: deps.access }),
    ...signInOf(config, a),
    ledger: new ConsoleLedger({ audit: deps.audit, registry: a.registry, log: a.log }),
    refusals: counter(a.registry, {
      name: 'nettel_session_refusals_total',
      help: 'Requests refused for their console session, by reason (missing, ended, malformed, csrf_token, origin)',
      labelNames: ['reason'] as const,
    }),
  };
  return { consoleAuth, buckets: [bucket, signIns] };
}
