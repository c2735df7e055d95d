import { chromium, type Browser } from 'playwright-core';
import { decodeJwt } from 'jose';
import { startTestOidcProvider, type TestOidcProvider } from '../support/oidc-provider';
import { authorizationRequest, codeOf, exchangeCode, fillProviderLogin } from '../support/oidc-sign-in';

const chromiumArgs = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** The tests' OpenID provider's login page, walked in Debian's chromium as a person signing in to the console walks it. */
describe("the test OpenID provider's login page in chromium", () => {
  let provider: TestOidcProvider;
  let browser: Browser;
  const redirectUri = 'http://127.0.0.1:9/auth/callback';

  beforeAll(async () => {
    provider = await startTestOidcProvider({
      users: [{ subject: 'grace', name: 'Grace Example', email: 'grace@example.test', groups: ['netops'] }],
      redirectUris: [redirectUri],
    });
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: chromiumArgs });
  });
  afterAll(async () => {
    await browser?.close();
    await provider?.stop();
  });

  test('a person signs in on the login page and the code it sends back buys their tokens', async () => {
    const client = { issuer: provider.issuer, clientId: provider.clientId, clientSecret: provider.clientSecret, redirectUri };
    const started = await authorizationRequest(client);
    const page = await browser.newPage();
    const callback = page.waitForRequest((request) => request.url().startsWith(redirectUri));
    await page.goto(started.url.toString());
    await fillProviderLogin(page, 'grace');
    const code = codeOf(new URL((await callback).url()), started);
    const tokens = await exchangeCode(started.tokenEndpoint, client, code, started.verifier);
    expect(decodeJwt(tokens.access_token)).toMatchObject({ sub: 'grace', groups: ['netops'], aud: provider.audience });
  });
});
