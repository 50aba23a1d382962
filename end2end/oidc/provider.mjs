// A real OpenID provider for the tests: the certified `oidc-provider` package, with its own
// sign-in page and the people the tests sign in as. Started by the tests (server/tests/api/
// oidc.rs, end2end/tests/sign-in.spec.ts), never by `make run`.
//
// It listens on 127.0.0.1 (OIDC_PORT, or any free port) and prints `listening <issuer>` once it
// answers. People: alice (groups ops), bob (none), carol (ops), erin (ops); everyone's password
// is `provider-password`. POST /__test/groups?person=NAME with a JSON array sets a person's
// groups, adding the person if new (what an administrator at the provider would do). With
// OIDC_EXIT_WITH_STDIN=1 it stops when its standard input closes: a test process that ends,
// however it ends, takes the provider with it. The client `bulwark` (secret
// `bulwark-secret`) may return to any 127.0.0.1 port's /auth/oidc/*/callback: each test's
// console listens on a port of its own.

import http from 'node:http';
import Provider from 'oidc-provider';

export const PASSWORD = 'provider-password';
const groups = { alice: ['ops'], bob: [], carol: ['ops'], erin: ['ops'] };

const server = http.createServer();
await new Promise((ready) => server.listen(Number(process.env.OIDC_PORT || 0), '127.0.0.1', ready));
const issuer = `http://127.0.0.1:${server.address().port}`;

const loopback = (value, path) => {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' && url.hostname === '127.0.0.1' && path.test(url.pathname);
  } catch {
    return false;
  }
};

const provider = new Provider(issuer, {
  clients: [{
    client_id: 'bulwark',
    client_secret: 'bulwark-secret',
    redirect_uris: ['http://127.0.0.1/auth/oidc/test/callback'],
    post_logout_redirect_uris: ['http://127.0.0.1/login'],
    grant_types: ['authorization_code'],
    response_types: ['code'],
  }],
  // Groups travel in the ID token, as Keycloak's, Authentik's and Entra's can be made to.
  conformIdTokenClaims: false,
  claims: { openid: ['sub'], profile: ['preferred_username', 'groups'], email: ['email'] },
  // A person's `sub` is `u-NAME`: not their name, so the console must key them by it.
  findAccount: async (_ctx, sub) => {
    const name = sub.replace(/^u-/, '');
    return name in groups ? {
      accountId: sub,
      claims: async () => ({
        sub,
        preferred_username: name,
        email: `${name}@example.test`,
        groups: groups[name],
      }),
    } : undefined;
  },
  features: { devInteractions: { enabled: false } },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  cookies: { keys: ['bulwark-test-provider'] },
  pkce: { required: () => true, methods: ['S256'] },
});

const { Client } = provider;
Client.prototype.redirectUriAllowed = (value) => loopback(value, /^\/auth\/oidc\/[^/]+\/callback$/);
Client.prototype.postLogoutRedirectUriAllowed = (value) => loopback(value, /^\/login$/);

const page = (uid, error) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Test provider: sign in</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><h1>Test provider</h1>${error ? `<p role="alert">${error}</p>` : ''}
<form method="post" action="/interaction/${uid}">
<label>Name <input name="login" autocomplete="username" autofocus></label>
<label>Password <input name="password" type="password"></label>
<button type="submit">Continue</button></form></body></html>`;

const form = (req) => new Promise((done) => {
  let body = '';
  req.on('data', (chunk) => { body += chunk; });
  req.on('end', () => done(new URLSearchParams(body)));
});

// Signs the person in and grants what the console asked for, with no consent screen (the
// provider belongs to the company, as in production set-ups).
async function finish(req, res, login) {
  const { params, prompt } = await provider.interactionDetails(req, res);
  const grant = new provider.Grant({ accountId: login, clientId: params.client_id });
  grant.addOIDCScope(params.scope);
  const grantId = await grant.save();
  const result = { login: { accountId: login }, consent: { grantId } };
  if (prompt.name === 'consent') delete result.login;
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
}

async function interaction(req, res, uid) {
  if (req.method === 'GET') {
    const { prompt, session } = await provider.interactionDetails(req, res);
    if (prompt.name === 'consent' && session) return finish(req, res, session.accountId);
    res.setHeader('content-type', 'text/html; charset=utf-8');
    return res.end(page(uid));
  }
  const fields = await form(req);
  const login = fields.get('login') || '';
  if (!(login in groups) || fields.get('password') !== PASSWORD) {
    res.statusCode = 401;
    res.setHeader('content-type', 'text/html; charset=utf-8');
    return res.end(page(uid, 'Unknown name or wrong password'));
  }
  return finish(req, res, `u-${login}`);
}

async function setGroups(req, res, url) {
  const person = url.searchParams.get('person');
  let body = '';
  for await (const chunk of req) body += chunk;
  groups[person] = JSON.parse(body);
  res.statusCode = 204;
  res.end();
}

const oidc = provider.callback();
server.on('request', (req, res) => {
  const url = new URL(req.url, issuer);
  const match = url.pathname.match(/^\/interaction\/([^/]+)$/);
  let handled;
  if (match) handled = interaction(req, res, match[1]);
  else if (url.pathname === '/__test/groups' && req.method === 'POST') handled = setGroups(req, res, url);
  else return oidc(req, res);
  return handled.catch((error) => {
    res.statusCode = 500;
    res.end(String(error));
  });
});

if (process.env.OIDC_EXIT_WITH_STDIN === '1') {
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}

console.log(`listening ${issuer}`);
