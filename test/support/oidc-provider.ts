import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload, type KeyLike } from 'jose';
import { signInOverHttp, type PersonTokens } from './oidc-sign-in';

/**
 * A real OpenID provider for a test file: oidc-provider 9.13 (an OpenID
 * Certified implementation) in a child Node process on 127.0.0.1 and a free
 * port, with the test's users and their groups, one confidential client that
 * must use PKCE, and an RS256 key generated for this run. Access tokens are
 * JWTs for one resource, the API (`audience`), carrying the person's name,
 * email and groups. Stop it at the end of the test file.
 */
export interface TestUser {
  /** The person's `sub`; also what they type as the login on the provider's page. */
  subject: string;
  name: string;
  email: string;
  groups: string[];
}

export interface TestOidcProviderOptions {
  users: TestUser[];
  /** Where the provider may send a person back to (the console's `<base>/auth/callback`). */
  redirectUris?: string[];
  postLogoutRedirectUris?: string[];
  /** The API's audience: the resource access tokens are for. */
  audience?: string;
  accessTokenTtlSeconds?: number;
}

export interface SigningKey {
  kid: string;
  privateKey: KeyLike;
  publicJwk: JWK;
}

export interface TestOidcProvider {
  /** The issuer URL (`OIDC_ISSUER_URL`), e.g. http://127.0.0.1:40123 */
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly audience: string;
  readonly redirectUris: string[];
  /** The key the provider signs with now (the first of its JWKS). */
  readonly signingKey: SigningKey;
  /** A person's tokens, through the provider's login page driven over HTTP (authorization code + PKCE), no browser. */
  tokensFor(subject: string): Promise<PersonTokens>;
  /** A JWT signed with the provider's own key (or `key`): claims default to a valid access token for `subject`, `overrides` replace them. */
  signToken(subject: string, overrides?: JWTPayload, options?: { key?: SigningKey; header?: Record<string, unknown> }): Promise<string>;
  /** A key of the same kind the provider does not publish (forged signatures, unknown key ids). */
  foreignKey(kid?: string): Promise<SigningKey>;
  /** Restarts the provider on the same issuer with a new signing key, publishing the old one beside it. */
  rotateKey(): Promise<SigningKey>;
  stop(): Promise<void>;
}

const script = path.resolve(__dirname, 'oidc-provider-process.mjs');
const startTimeoutMs = 20_000;

export async function newSigningKey(kid = `k-${randomBytes(4).toString('hex')}`): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

async function privateJwkOf(key: SigningKey): Promise<JWK> {
  return { ...(await exportJWK(key.privateKey)), kid: key.kid, alg: 'RS256', use: 'sig' };
}

/** Spawns the provider process and waits for its `listening` line. */
async function spawnProvider(settingsFile: string): Promise<{ child: ChildProcess; issuer: string }> {
  const child = spawn(process.execPath, [script, settingsFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const lines = createInterface({ input: child.stdout });
  const issuer = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the OpenID provider did not start in ${startTimeoutMs} ms: ${stderr.join('')}`)), startTimeoutMs);
    child.once('exit', (code) => reject(new Error(`the OpenID provider exited (${code}): ${stderr.join('')}`)));
    lines.on('line', (line) => {
      // oidc-provider prints its own warnings on stdout too (its end-session page, for one): only the JSON line is ours.
      if (!line.startsWith('{')) return;
      const message = JSON.parse(line) as { listening?: string };
      if (message.listening) {
        clearTimeout(timer);
        resolve(message.listening);
      }
    });
  });
  return { child, issuer };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

interface ProviderClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: string;
}

function clientOf(options: TestOidcProviderOptions): ProviderClient {
  return {
    client_id: `nettel-${randomBytes(3).toString('hex')}`,
    client_secret: randomBytes(24).toString('base64url'),
    redirect_uris: options.redirectUris ?? ['http://127.0.0.1/auth/callback'],
    post_logout_redirect_uris: options.postLogoutRedirectUris ?? [],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  };
}

/** The provider process and what the test needs of it; `restart` keeps its port, so its issuer stays. */
class ProviderProcess implements TestOidcProvider {
  private readonly folder = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-oidc-'));
  private readonly settingsFile = path.join(this.folder, 'settings.json');
  private readonly client: ProviderClient;
  readonly audience: string;
  private keys: SigningKey[] = [];
  private running?: { child: ChildProcess; issuer: string };

  constructor(private readonly options: TestOidcProviderOptions) {
    this.client = clientOf(options);
    this.audience = options.audience ?? 'https://api.nettel.test';
  }

  get issuer(): string {
    return this.running!.issuer;
  }
  get clientId(): string {
    return this.client.client_id;
  }
  get clientSecret(): string {
    return this.client.client_secret;
  }
  get redirectUris(): string[] {
    return this.client.redirect_uris;
  }
  get signingKey(): SigningKey {
    return this.keys[0]!;
  }

  async start(): Promise<void> {
    this.keys = [await newSigningKey()];
    await this.writeSettings(0);
    this.running = await spawnProvider(this.settingsFile);
  }

  tokensFor(subject: string): Promise<PersonTokens> {
    return signInOverHttp({ issuer: this.issuer, clientId: this.clientId, clientSecret: this.clientSecret, redirectUri: this.redirectUris[0]!, subject });
  }

  signToken(subject: string, overrides: JWTPayload = {}, options: { key?: SigningKey; header?: Record<string, unknown> } = {}): Promise<string> {
    const key = options.key ?? this.signingKey;
    const now = Math.floor(Date.now() / 1000);
    const user = this.options.users.find((u) => u.subject === subject);
    const claims: JWTPayload = {
      iss: this.issuer,
      aud: this.audience,
      sub: subject,
      iat: now,
      exp: now + 300,
      jti: randomBytes(8).toString('hex'),
      client_id: this.clientId,
      scope: 'api',
      ...(user ? { name: user.name, email: user.email, groups: user.groups } : {}),
      ...overrides,
    };
    return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: key.kid, ...options.header }).sign(key.privateKey);
  }

  foreignKey(kid?: string): Promise<SigningKey> {
    return newSigningKey(kid);
  }

  async rotateKey(): Promise<SigningKey> {
    const port = Number(new URL(this.issuer).port);
    await stopChild(this.running!.child);
    this.keys = [await newSigningKey(), ...this.keys];
    await this.writeSettings(port);
    this.running = await spawnProvider(this.settingsFile);
    return this.signingKey;
  }

  async stop(): Promise<void> {
    if (this.running) await stopChild(this.running.child);
    fs.rmSync(this.folder, { recursive: true, force: true });
  }

  private async writeSettings(port: number): Promise<void> {
    const settings = {
      port,
      keys: await Promise.all(this.keys.map(privateJwkOf)),
      cookieKeys: [randomBytes(32).toString('base64url')],
      users: this.options.users,
      client: this.client,
      audience: this.audience,
      accessTokenTtlSeconds: this.options.accessTokenTtlSeconds ?? 600,
    };
    fs.writeFileSync(this.settingsFile, JSON.stringify(settings), { mode: 0o600 });
  }
}

export async function startTestOidcProvider(options: TestOidcProviderOptions): Promise<TestOidcProvider> {
  const provider = new ProviderProcess(options);
  try {
    await provider.start();
  } catch (err) {
    await provider.stop();
    throw err;
  }
  return provider;
}
