// The secret formats mcpgate knows: cloud, VCS, payment, chat and AI providers' tokens, private keys,
// JWTs, connection strings with a password, and a value assigned to a secret-like name that looks
// random (entropy.ts). Each pattern is anchored on what the provider puts in every token (a prefix,
// a fixed length, a separator), so ordinary text does not match; the entropy check is the only one
// that judges a value by its look, and only after a secret-like name.

import type { Detector } from './detector.js';
import { looksRandom } from './entropy.js';

// A token ends where a token character does not follow (\b is wrong for `-` and `_`).
const END = '(?![A-Za-z0-9_-])';
const START = '(?<![A-Za-z0-9_-])';

function secret(
  id: string,
  label: string,
  hints: readonly string[],
  source: string,
  valid?: (value: string) => boolean,
  flags = '',
): Detector {
  const pattern = new RegExp(source, `gd${flags}`);
  return Object.freeze({ id, label, kind: 'secret' as const, hints: Object.freeze([...hints]), pattern, valid });
}

/** An AWS secret access key is 40 base64 characters; alone it is any 40 characters, so its name must precede it. */
const AWS_SECRET_NAME = String.raw`(?:aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key|SecretAccessKey)`;

/** The secret-like names after which a random-looking value is a secret (entropy.ts). */
const SECRET_NAME = String.raw`(?:api[_-]?key|apikey|access[_-]?key|secret(?:[_-]?key)?|client[_-]?secret|auth[_-]?token|access[_-]?token|refresh[_-]?token|bearer|token|passw(?:or)?d|passwd|pwd|credentials?|private[_-]?key|signing[_-]?key)`;

export const SECRET_FORMATS: readonly Detector[] = Object.freeze([
  secret(
    'private-key',
    'private key',
    ['-----BEGIN'],
    String.raw`-----BEGIN (?<kind>(?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?)-----[\s\S]{1,16384}?(?:-----END \k<kind>-----|$)`,
  ),
  secret(
    'aws-access-key-id',
    'aws access key id',
    ['AKIA', 'ASIA', 'ABIA', 'ACCA', 'A3T'],
    String.raw`${START}(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}${END}`,
  ),
  secret(
    'aws-secret-access-key',
    'aws secret access key',
    ['secret'],
    String.raw`${AWS_SECRET_NAME}["']?\s*[:=]\s*["']?(?<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])`,
    undefined,
    'i',
  ),
  secret('github-token', 'github token', ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'], String.raw`${START}gh[pousr]_[A-Za-z0-9]{36,251}${END}`),
  secret('github-fine-grained-token', 'github token', ['github_pat_'], String.raw`${START}github_pat_[A-Za-z0-9_]{22,255}${END}`),
  secret(
    'gitlab-token',
    'gitlab token',
    ['glpat-', 'gldt-', 'glrt-', 'glptt-'],
    String.raw`${START}(?:glpat|gldt|glrt|glptt)-[A-Za-z0-9_-]{20,}${END}`,
  ),
  secret('slack-token', 'slack token', ['xox'], String.raw`${START}xox[abposre]-(?:[0-9]+-){1,3}[A-Za-z0-9-]{8,}${END}`),
  secret(
    'slack-webhook',
    'slack webhook',
    ['hooks.slack.com'],
    String.raw`https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/]{20,}`,
  ),
  secret(
    'stripe-key',
    'stripe key',
    ['sk_live_', 'rk_live_', 'sk_test_', 'rk_test_'],
    String.raw`${START}[sr]k_(?:live|test)_[A-Za-z0-9]{16,247}${END}`,
  ),
  secret('google-api-key', 'google api key', ['AIza'], String.raw`${START}AIza[0-9A-Za-z_-]{35}${END}`),
  secret('anthropic-key', 'anthropic key', ['sk-ant-'], String.raw`${START}sk-ant-(?:api|admin|sid)[0-9]{2}-[A-Za-z0-9_-]{32,}${END}`),
  secret(
    'openai-key',
    'openai key',
    ['sk-'],
    String.raw`${START}sk-(?!ant-)(?:(?:proj|svcacct|admin|None)-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}${END}|${START}sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}${END}`,
  ),
  secret('jwt', 'jwt', ['eyJ'], String.raw`${START}eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{16,}${END}`),
  secret(
    'connection-string-password',
    'connection string password',
    ['://'],
    String.raw`\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|redis|rediss|amqps?|mssql|sqlserver|ftp|sftp|smtps?|ldaps?|https?)://[^\s:/@'"]{0,128}:(?<secret>[^\s@'"/]{3,256})@[A-Za-z0-9.-]`,
    (password) => !/^(?:\$\{[^}]*\}|\$[A-Z_]+|\*+|x+|password|pass|PASSWORD|<[^>]*>)$/.test(password),
  ),
  secret('azure-storage-key', 'azure storage key', ['AccountKey='], String.raw`AccountKey=(?<secret>[A-Za-z0-9+/]{86}==)`),
  secret(
    'azure-sas-signature',
    'azure sas signature',
    ['sig='],
    String.raw`[?&]sv=[0-9-]{10}&[^\s"']{0,512}?sig=(?<secret>[A-Za-z0-9%+/=]{40,})`,
  ),
  secret('npm-token', 'npm token', ['npm_'], String.raw`${START}npm_[A-Za-z0-9]{36}${END}`),
  secret('pypi-token', 'pypi token', ['pypi-AgE'], String.raw`${START}pypi-AgE[A-Za-z0-9_-]{50,}${END}`),
  secret('twilio-api-key', 'twilio api key', ['SK'], String.raw`${START}SK[0-9a-f]{32}${END}`),
  secret('sendgrid-key', 'sendgrid key', ['SG.'], String.raw`${START}SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}${END}`),
  secret('mailgun-key', 'mailgun key', ['key-'], String.raw`${START}key-[0-9a-f]{32}${END}`),
  secret('huggingface-token', 'hugging face token', ['hf_'], String.raw`${START}hf_[A-Za-z]{34}${END}`),
  secret('digitalocean-token', 'digitalocean token', ['dop_v1_', 'doo_v1_', 'dor_v1_'], String.raw`${START}do[por]_v1_[a-f0-9]{64}${END}`),
  secret(
    'shopify-token',
    'shopify token',
    ['shpat_', 'shpca_', 'shppa_', 'shpss_'],
    String.raw`${START}shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}${END}`,
  ),
  secret('telegram-bot-token', 'telegram bot token', [':AA'], String.raw`(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}${END}`),
  secret(
    'square-token',
    'square token',
    ['sq0atp-', 'sq0csp-', 'EAAA'],
    String.raw`${START}(?:sq0atp-[A-Za-z0-9_-]{22}|sq0csp-[A-Za-z0-9_-]{43}|EAAA[A-Za-z0-9_-]{60})${END}`,
  ),
  secret('databricks-token', 'databricks token', ['dapi'], String.raw`${START}dapi[a-f0-9]{32}(?:-[0-9])?${END}`),
  secret(
    'secret-assignment',
    'secret value',
    ['key', 'secret', 'token', 'pass', 'pwd', 'credential', 'bearer'],
    String.raw`(?<![A-Za-z0-9])${SECRET_NAME}[A-Za-z0-9_-]{0,24}["']?\s{0,4}(?:[:=]|=>|\s)\s{0,4}(?:["'](?<secret>[^\s"'\\]{16,512})["']|(?<bare>[A-Za-z0-9_\-+/=.~]{16,512}))`,
    looksRandom,
    'i',
  ),
]);
