// Generated secrets of every format the guards know, and ordinary text of a similar shape. No value
// here is real, and none is written in the repository: each is assembled at run time from a
// seeded random generator and prefixes split in parts, so secret scanners see no secret in the source.

/** One generated secret: its format, the value that must never pass, and a sentence it sits in. */
export interface SecretSample {
  readonly format: string;
  readonly value: string;
  readonly text: string;
}

/** A deterministic generator (mulberry32), so the corpus is the same on every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ALNUM = UPPER + LOWER + DIGITS;
const HEX = '0123456789abcdef';
const B64 = ALNUM + '+/';
const B64URL = ALNUM + '-_';

/** Joins parts: a prefix written whole in a test file would look like a secret to a scanner. */
const p = (...parts: string[]): string => parts.join('');

function base64url(text: string): string {
  return Buffer.from(text).toString('base64url');
}

export function secretCorpus(seed = 46): SecretSample[] {
  const next = random(seed);
  const pick = (alphabet: string, n: number): string => {
    let out = '';
    for (let i = 0; i < n; i++) out += alphabet[Math.floor(next() * alphabet.length)];
    // A value of a mixed alphabet always has a digit and a letter, as real tokens nearly always do.
    if (alphabet === ALNUM || alphabet === B64 || alphabet === B64URL) return `${out.slice(0, -2)}7q`;
    return out;
  };
  const samples: SecretSample[] = [];
  const add = (format: string, value: string, text = `the value is ${value} (keep it safe)`): void => {
    samples.push({ format, value, text });
  };
  for (const prefix of [p('AK', 'IA'), p('AS', 'IA'), p('AK', 'IA')]) add('aws-access-key-id', prefix + pick(UPPER + '234567', 16));
  for (const name of ['aws_secret_access_key', 'AWS_SECRET_ACCESS_KEY', 'SecretAccessKey']) {
    const value = pick(B64, 40);
    add('aws-secret-access-key', value, `[default]\n${name} = ${value}\n`);
  }
  for (const kind of ['p', 'o', 'u', 's', 'r']) add('github-token', p('gh', kind, '_') + pick(ALNUM, 36));
  add('github-fine-grained-token', p('github', '_pat_') + pick(ALNUM, 22) + '_' + pick(ALNUM, 59));
  const pat = p('github', '_pat_') + pick(ALNUM, 22) + '_' + pick(ALNUM, 59);
  add('github-fine-grained-token', pat, `export GH_TOKEN=${pat}`);
  add('gitlab-token', p('gl', 'pat-') + pick(ALNUM + '_-', 20));
  add('gitlab-token', p('gl', 'pat-') + pick(ALNUM, 26));
  add('slack-token', p('xo', 'xb-') + pick(DIGITS, 12) + '-' + pick(DIGITS, 13) + '-' + pick(ALNUM, 24));
  add('slack-token', p('xo', 'xp-') + pick(DIGITS, 12) + '-' + pick(DIGITS, 12) + '-' + pick(DIGITS, 13) + '-' + pick(HEX, 32));
  add(
    'slack-webhook',
    p('https://hooks.', 'slack.com/services/T') + pick(UPPER + DIGITS, 8) + '/B' + pick(UPPER + DIGITS, 10) + '/' + pick(ALNUM, 24),
  );
  for (const prefix of [p('sk', '_live_'), p('rk', '_live_'), p('sk', '_test_')]) add('stripe-key', prefix + pick(ALNUM, 24));
  add('google-api-key', p('AI', 'za') + pick(ALNUM + '_-', 35));
  add('google-api-key', p('AI', 'za') + pick(ALNUM, 35));
  add('anthropic-key', p('sk-', 'ant-', 'api03-') + pick(B64URL, 93) + 'AA');
  add('anthropic-key', p('sk-', 'ant-', 'admin01-') + pick(B64URL, 93) + 'AA');
  add('openai-key', p('sk-', 'proj-') + pick(B64URL, 74) + p('T3Blbk', 'FJ') + pick(B64URL, 74));
  add('openai-key', p('sk-') + pick(ALNUM, 20) + p('T3Blbk', 'FJ') + pick(ALNUM, 20));
  add('openai-key', p('sk-', 'svcacct-') + pick(B64URL, 64));
  for (const kind of ['RSA ', 'EC ', 'OPENSSH ', '']) {
    const body = Array.from({ length: 8 }, () => pick(B64, 64)).join('\n');
    const value = `${p('-----BEGIN ', kind, 'PRIVATE', ' KEY-----')}\n${body}\n${p('-----END ', kind, 'PRIVATE', ' KEY-----')}`;
    add('private-key', value, `here is the key:\n${value}\nend`);
  }
  for (const alg of ['HS256', 'RS256', 'ES256']) {
    const header = base64url(JSON.stringify({ alg, typ: 'JWT' }));
    const payload = base64url(JSON.stringify({ sub: pick(DIGITS, 10), name: 'Test User', iat: 1700000000 + Math.floor(next() * 1e6) }));
    const jwt = `${header}.${payload}.${pick(B64URL, 43)}`;
    add('jwt', jwt, `Authorization: Bearer ${jwt}`);
  }
  for (const scheme of ['postgres', 'postgresql', 'mysql', 'mongodb+srv', 'redis', 'amqp']) {
    const password = pick(ALNUM, 18);
    const user = scheme === 'redis' ? '' : 'app_user';
    add('connection-string-password', password, `DATABASE_URL=${scheme}://${user}:${password}@db.internal.example:5432/main`);
  }
  for (let i = 0; i < 2; i++) {
    const key = pick(B64, 86) + '==';
    add(
      'azure-storage-key',
      key,
      `DefaultEndpointsProtocol=https;AccountName=acct${i};${p('Account', 'Key=')}${key};EndpointSuffix=core.windows.net`,
    );
  }
  add('npm-token', p('np', 'm_') + pick(ALNUM, 36));
  const npm = p('np', 'm_') + pick(ALNUM, 36);
  add('npm-token', npm, `//registry.npmjs.org/:_authToken=${npm}`);
  add('pypi-token', p('py', 'pi-AgEIcHlwaS5vcmc') + pick(B64URL, 70));
  add('twilio-api-key', p('S', 'K') + pick(HEX, 32));
  add('sendgrid-key', p('S', 'G.') + pick(B64URL, 22) + '.' + pick(B64URL, 43));
  add('mailgun-key', p('ke', 'y-') + pick(HEX, 32));
  add('huggingface-token', p('h', 'f_') + pick(UPPER + LOWER, 34));
  add('digitalocean-token', p('do', 'p_v1_') + pick(HEX, 64));
  add('shopify-token', p('sh', 'pat_') + pick(HEX, 32));
  add('telegram-bot-token', pick('123456789', 1) + pick(DIGITS, 8) + p(':A', 'A') + pick(B64URL, 33));
  add('square-token', p('sq0', 'atp-') + pick(B64URL, 22));
  add('databricks-token', p('da', 'pi') + pick(HEX, 32));
  for (const [name, quote] of [
    ['api_key', '"'],
    ['API_KEY', ''],
    ['client_secret', "'"],
    ['password', '"'],
    ['DB_PASSWORD', ''],
    ['accessToken', '"'],
    ['refresh_token', '"'],
  ] as const) {
    const value = pick(ALNUM, 32);
    const text =
      quote === '"'
        ? `{"${name}": "${value}", "region": "eu-west-1"}`
        : quote === "'"
          ? `${name}: '${value}'`
          : `${name}=${value}\nDEBUG=false`;
    add('secret-assignment', value, text);
  }
  return samples;
}

/** Ordinary text of a similar shape: hashes, UUIDs, base64 images, code, URLs, prose. None is a secret. */
export function lookAlikeCorpus(seed = 64): string[] {
  const next = random(seed);
  const pick = (alphabet: string, n: number): string => {
    let out = '';
    for (let i = 0; i < n; i++) out += alphabet[Math.floor(next() * alphabet.length)];
    return out;
  };
  const uuid = (): string => `${pick(HEX, 8)}-${pick(HEX, 4)}-4${pick(HEX, 3)}-a${pick(HEX, 3)}-${pick(HEX, 12)}`;
  const texts: string[] = [];
  for (let i = 0; i < 20; i++) texts.push(`commit ${pick(HEX, 40)}\nAuthor: Dev <dev@example.com>\n\n    fix the parser`);
  for (let i = 0; i < 20; i++) texts.push(`sha256:${pick(HEX, 64)}  dist/app-${i}.tar.gz`);
  for (let i = 0; i < 10; i++) texts.push(`md5 ${pick(HEX, 32)} sha1 ${pick(HEX, 40)}`);
  for (let i = 0; i < 20; i++) texts.push(`{"id": "${uuid()}", "parent": "${uuid()}", "status": "done"}`);
  for (let i = 0; i < 10; i++) texts.push(`"integrity": "sha512-${pick(B64, 86)}=="`);
  for (let i = 0; i < 10; i++) texts.push(`<img src="data:image/png;base64,${pick(B64, 400)}=" alt="chart">`);
  for (let i = 0; i < 10; i++) texts.push(`image: registry.example.com/team/api@sha256:${pick(HEX, 64)}`);
  for (let i = 0; i < 10; i++) texts.push(`https://cdn.example.com/assets/${pick(ALNUM, 32)}/bundle.js?v=${pick(HEX, 8)}`);
  const code = [
    'const token = await getAccessToken(client, { scope: "repo" });',
    'function checkPassword(password: string): boolean { return password.length >= 12; }',
    'export const API_KEY_HEADER = "x-api-key";',
    'if (!process.env.GITHUB_TOKEN) throw new Error("GITHUB_TOKEN is not set");',
    'password = os.environ["DB_PASSWORD"]',
    'secret_key = settings.SECRET_KEY_FROM_VAULT',
    'api_key: ${{ secrets.OPENAI_API_KEY }}',
    'DATABASE_URL=postgres://app:${DB_PASSWORD}@localhost:5432/app',
    'redis://localhost:6379/0',
    'const skip = items.filter((sk) => sk.enabled);',
    'The task asked for a new key-value store; see key-value.md for the design.',
    'token_type: "Bearer", expires_in: 3600',
    'password: "<your password here>"',
    'api_key = "YOUR_API_KEY_HERE_XXXXXXXXXXXX"',
    'ghp_ prefixes belong to personal access tokens; gho_ to OAuth apps.',
    'class SkuList extends Array<Sku> { }',
    'eyJhbGciOiJIUzI1NiJ9 is the start of a JWT header',
    'mongodb://localhost:27017/test',
    'import { sha256 } from "@noble/hashes/sha256";',
    'Use --api-key to pass the key, or set MCPGATE_API_KEY.',
  ];
  for (const line of code) texts.push(line);
  for (let i = 0; i < 20; i++)
    texts.push(
      `Order ${pick(DIGITS, 8)} shipped on 2026-0${1 + (i % 9)}-1${i % 10}; tracking ${pick(UPPER + DIGITS, 18)}; total ${pick(DIGITS, 3)}.${pick(DIGITS, 2)} EUR`,
    );
  for (let i = 0; i < 20; i++)
    texts.push(`Build ${pick(HEX, 7)} passed in ${pick(DIGITS, 2)}s: ${pick(LOWER, 6)} ${pick(LOWER, 8)} ${pick(LOWER, 5)}.`);
  for (let i = 0; i < 10; i++) texts.push(`session=${uuid()}; Path=/; HttpOnly`);
  for (let i = 0; i < 10; i++) texts.push(`AKIDEXAMPLE${pick(UPPER, 10)} is not an access key; neither is ASIAN${pick(LOWER, 12)}`);
  for (let i = 0; i < 5; i++) texts.push(`{"type": "image", "mimeType": "image/jpeg", "data": "${pick(B64, 200)}"}`);
  for (let i = 0; i < 5; i++) texts.push(`const checksum = "${pick(HEX, 64)}"; // sha256 of the release`);
  for (let i = 0; i < 5; i++) texts.push(`tokenizer: cl100k_base, tokens: ${pick(DIGITS, 4)}, key_count: ${pick(DIGITS, 3)}`);
  for (let i = 0; i < 5; i++) texts.push(`secretName: tls-cert-${pick(LOWER, 6)}\nkeyRef: signing-key-${pick(DIGITS, 2)}`);
  for (let i = 0; i < 5; i++) texts.push(`{"password_hash": "$2b$12$${pick(B64.replace('+', '.'), 53)}", "user": "u${i}"}`);
  return texts;
}
