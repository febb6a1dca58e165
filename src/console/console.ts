// The operator's console at /ui on the HTTP front's port: its routes, each for a signed-in admin
// (logins.ts) and, for a POST, only with the login's CSRF token. Off until the rules file names an
// admin (`admins`); the front's gate (Host, Origin, repeated headers) has already passed every request
// that reaches here, and every answer carries a strict Content-Security-Policy (no inline script or
// style). Approve is pins/approve.ts's exact-digest approval, refused when the tool changed since the
// page showed it; Revive is SIGHUP's revive for one server; a pending call (approvals-page.ts) is
// approved or denied bound to the digest of the arguments shown. The routes and the policy: the
// room's README, "Routes".

import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../errors.js';
import type { Gateway } from '../gateway/gateway.js';
import type { AuditLog } from '../observability/audit.js';
import type { Logger } from '../observability/logger.js';
import { approveHeld } from '../pins/approve.js';
import { CONSOLE_CSS, CONSOLE_JS } from './assets.js';
import { html, page, type Raw } from './html.js';
import { loginKey } from './login-key.js';
import { LOGIN_COOKIE, Logins, csrfMatches, type Login } from './logins.js';
import { agentView, loginPage, overview, quotaPage, serverDetail } from './pages.js';
import { pendingCall, pendingList } from './approvals-page.js';
import { SharedSignInLimit, type SharedSignInCounter } from './shared-sign-in-limit.js';
import { SignInLimiter } from './sign-in-limit.js';
import { SignedOut } from './signed-out.js';

export interface ConsoleParts {
  gateway: Gateway;
  audit: AuditLog | undefined;
  log: Logger;
  /** With `--redis`: the failed sign-ins every worker counts (else each worker counts its own). */
  signIns?: SharedSignInCounter;
}

export const CONSOLE_PATH = '/ui';

/** A form body larger than this is refused (the console's forms are a few hundred bytes). */
const MAX_FORM_BYTES = 16 * 1024;

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // Not no-referrer: with it a browser sends `Origin: null` on a form POST, which the front's gate refuses.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

/** The hint logged at start and shown at /ui while no admin is configured. */
export const CONSOLE_OFF =
  'the console at /ui is off: name an admin in the rules file ("admins": {"NAME": {"tokens": ["sha256:…"]}}, the hash from \'mcpgate token NAME\') to turn it on';

export class Console {
  private readonly logins: Logins;
  private readonly limiter: SharedSignInLimit;

  constructor(private readonly parts: ConsoleParts) {
    this.limiter = new SharedSignInLimit(new SignInLimiter(), parts.signIns, parts.log);
    // The state directory's key, read (or made) at the first sign-in or cookie, not at start.
    const dir = parts.gateway.pins.dir;
    let key: Buffer | undefined;
    this.logins = new Logins(() => (key ??= loginKey(dir)), new SignedOut(dir));
  }

  get enabled(): boolean {
    return this.parts.gateway.rules.admins.size > 0;
  }

  /** Answers one request under /ui. */
  handle(path: string, req: IncomingMessage, res: ServerResponse): void {
    if (path === '/ui/console.js') return this.asset(req, res, 'text/javascript; charset=utf-8', CONSOLE_JS);
    if (path === '/ui/console.css') return this.asset(req, res, 'text/css; charset=utf-8', CONSOLE_CSS);
    if (!this.enabled) return this.send(res, 404, page('Console off', html`<p>${CONSOLE_OFF}</p>`));
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'POST')
      return this.send(res, 405, page('Not allowed', html`<p>${method} is not allowed here</p>`), { allow: 'GET, POST' });
    if (path === '/ui/login')
      return method === 'GET'
        ? this.send(res, 200, page('Sign in', loginPage()))
        : void this.signIn(req, res).catch((err: unknown) => this.failed(res, err));
    const rules = this.parts.gateway.rules;
    const cookie = cookieOf(req, rules);
    const login = this.logins.find(rules, req.headers.cookie, cookie.name);
    if (login?.renewed !== undefined) res.setHeader('set-cookie', cookie.set(login.renewed));
    if (login === undefined) {
      // A page asks the browser to sign in; a live region or a POST is refused outright.
      if (method === 'GET' && !path.startsWith('/ui/live/')) return this.redirect(res, '/ui/login');
      return this.send(res, 401, page('Sign in', html`<p>not signed in: <a href="/ui/login">sign in</a></p>`));
    }
    if (method === 'POST') return void this.post(path, req, res, login).catch((err: unknown) => this.failed(res, err));
    this.get(path, req, res, login);
  }

  private get(path: string, req: IncomingMessage, res: ServerResponse, login: Login): void {
    const { gateway } = this.parts;
    const url = new URL(req.url ?? '/', 'http://console');
    if (path === '/ui' || path === '/ui/') {
      return this.send(res, 200, page('Overview', live('/ui/live/overview', overview(gateway)), login));
    }
    if (path === '/ui/live/overview') return this.fragment(req, res, overview(gateway));
    if (path === '/ui/approvals' || path === '/ui/live/approvals')
      return void this.approvalsPage(path, url, req, res, login).catch((err: unknown) => this.failed(res, err));
    const approval = approvalPath(path);
    if (approval !== undefined && approval.action === undefined)
      return void this.approvalPage(approval.id, res, login).catch((err: unknown) => this.failed(res, err));
    if (path === '/ui/quotas' || path === '/ui/live/quotas') {
      return void gateway.quotas.status().then(
        (status) => {
          const body = quotaPage(status);
          if (path === '/ui/live/quotas') return this.fragment(req, res, body);
          this.send(res, 200, page('Quotas', html`<h2>Quotas and rate limits</h2>${live('/ui/live/quotas', body)}`, login));
        },
        (err: unknown) => this.failed(res, err),
      );
    }
    if (path === '/ui/agent') {
      const id = url.searchParams.get('id') ?? undefined;
      return this.send(res, 200, page('View as agent', agentView(gateway, id === '' ? undefined : id), login));
    }
    const server = serverPath(path, '/ui/server/') ?? serverPath(path, '/ui/live/server/');
    if (server !== undefined) {
      const detail = serverDetail(gateway, server, login.csrf);
      if (detail === undefined)
        return this.send(res, 404, page('Unknown server', html`<p>no server "${server}" in the configuration</p>`, login));
      if (path.startsWith('/ui/live/')) return this.fragment(req, res, detail);
      const note = url.searchParams.get('done');
      return this.send(
        res,
        200,
        page(
          server,
          html`<h2>Server ${server}</h2>${note === null ? '' : html`<p class="notice">${note}</p>`}${live(`/ui/live/server/${encodeURIComponent(server)}`, detail)}`,
          login,
        ),
      );
    }
    this.send(res, 404, page('Not found', html`<p>no page ${path}</p>`, login));
  }

  private async post(path: string, req: IncomingMessage, res: ServerResponse, login: Login): Promise<void> {
    const form = await readForm(req, res);
    if (form === undefined) return;
    if (!csrfMatches(login, form.get('csrf') ?? undefined)) {
      this.parts.log.warn('console: a request without a valid CSRF token was refused', { admin: login.admin, path });
      return this.send(
        res,
        403,
        page('Refused', html`<p>this request did not carry the console's CSRF token; reload the page and try again</p>`, login),
      );
    }
    if (path === '/ui/logout') {
      this.logins.signOut(login);
      return this.redirect(res, '/ui/login', { 'set-cookie': cookieOf(req, this.parts.gateway.rules).set('', 0) });
    }
    const decided = approvalPath(path);
    if (decided?.action !== undefined)
      return this.decideCall(res, login, decided.id, decided.action === 'approve', form.get('reason') ?? '', form.get('digest') ?? '');
    const approve = actionPath(path, 'approve');
    if (approve !== undefined) return this.approve(res, login, approve, form.get('tool') ?? '', form.get('digest') ?? '');
    const revive = actionPath(path, 'revive');
    if (revive !== undefined) {
      const conn = this.parts.gateway.connections.get(revive);
      if (conn === undefined) return this.send(res, 404, page('Unknown server', html`<p>server "${revive}" is not running</p>`, login));
      this.parts.log.info(`console: ${login.admin} revived server "${revive}"`, { server: revive, admin: login.admin });
      conn.revive(`revived in the console by ${login.admin}`);
      return this.redirect(res, `/ui/server/${encodeURIComponent(revive)}?done=${encodeURIComponent('revive requested')}`);
    }
    this.send(res, 404, page('Not found', html`<p>no action ${path}</p>`, login));
  }

  private async approve(res: ServerResponse, login: Login, server: string, tool: string, digest: string): Promise<void> {
    const { gateway } = this.parts;
    if (tool === '' || !digest.startsWith('sha256:'))
      return this.send(res, 400, page('Bad request', html`<p>approve needs the tool and the digest that was shown</p>`, login));
    try {
      await approveHeld(gateway.pins.store, gateway.pins.dir, { server, tools: [`${tool}@${digest}`], instructions: false });
    } catch (err) {
      if (err instanceof GatewayError && (err.code === 'MCPG_APPROVAL_OUTDATED' || err.code === 'MCPG_NOT_HELD')) {
        return this.send(
          res,
          409,
          page(
            'Not approved',
            html`<p class="problem">${err.message}</p><p><a href="/ui/server/${encodeURIComponent(server)}">back to ${server}</a></p>`,
            login,
          ),
        );
      }
      throw err;
    }
    this.parts.log.info(`console: ${login.admin} approved tool "${tool}" of server "${server}"`, { server, admin: login.admin });
    this.parts.audit?.record({ event: 'approval', server, tool, digest, by: `admin:${login.admin}` });
    this.redirect(
      res,
      `/ui/server/${encodeURIComponent(server)}?done=${encodeURIComponent(`approved ${tool}; the gateway releases it within a second`)}`,
    );
  }

  /** /ui/approvals (and its live region): every call waiting for a person's approval. */
  private async approvalsPage(path: string, url: URL, req: IncomingMessage, res: ServerResponse, login: Login): Promise<void> {
    const offset = Math.max(0, Math.min(Number.MAX_SAFE_INTEGER, Math.floor(Number(url.searchParams.get('offset') ?? 0)) || 0));
    const { calls, total } = await this.parts.gateway.approvals.page(offset, APPROVALS_PAGE);
    const list = pendingList({ calls, total, offset, size: APPROVALS_PAGE }, login.csrf);
    if (path === '/ui/live/approvals') return this.fragment(req, res, list);
    const note = url.searchParams.get('done');
    this.send(
      res,
      200,
      page(
        'Pending approvals',
        html`<h2>Pending approvals</h2>${note === null ? '' : html`<p class="notice">${note}</p>`}${live(offset === 0 ? '/ui/live/approvals' : `/ui/live/approvals?offset=${offset}`, list)}`,
        login,
      ),
    );
  }

  /** /ui/approvals/ID: the page of one call, the link an agent is given while it waits. */
  private async approvalPage(id: string, res: ServerResponse, login: Login): Promise<void> {
    const call = await this.parts.gateway.approvals.find(id);
    if (call === undefined || call.expiresAt <= Date.now())
      return this.send(
        res,
        404,
        page(
          'Not waiting',
          html`<p>call ${id} is not waiting for approval (it was decided, expired or cancelled)</p><p><a href="/ui/approvals">pending approvals</a></p>`,
          login,
        ),
      );
    this.send(res, 200, page('Approve a call', html`<h2>Approve a call</h2>${pendingCall(call, login.csrf, false)}`, login));
  }

  /** Approve or Deny: the desk takes the decision to the worker holding the call (the digest shown must be the call's). */
  private async decideCall(res: ServerResponse, login: Login, id: string, approve: boolean, reason: string, digest: string): Promise<void> {
    if (digest === '')
      return this.send(res, 400, page('Bad request', html`<p>a decision needs the digest of the call that was shown</p>`, login));
    try {
      await this.parts.gateway.approvals.decide(id, { approved: approve, by: `admin:${login.admin}`, reason, digest });
    } catch (err) {
      if (err instanceof GatewayError && err.code === 'MCPG_INVALID_PARAMS')
        return this.send(
          res,
          409,
          page('Not decided', html`<p class="problem">${err.message}</p><p><a href="/ui/approvals">pending approvals</a></p>`, login),
        );
      throw err;
    }
    this.redirect(res, `/ui/approvals?done=${encodeURIComponent(`${approve ? 'approved' : 'denied'} call ${id}`)}`);
  }

  private async signIn(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // The socket's address: a header (X-Forwarded-For) is the client's to write, so it is not believed.
    const address = req.socket.remoteAddress ?? 'unknown';
    const limited = await this.limiter.retryAfter(address);
    // Past its own address's limit a sign-in is refused without looking at the token. Past only the
    // limit of all addresses together, the token is still checked: failures spread over many
    // addresses must not lock a valid admin out; a wrong token is refused as limited.
    if (limited?.scope === 'address') return this.limited(res, address, limited.seconds, 'refused without checking the token');
    const form = await readForm(req, res);
    if (form === undefined) return;
    const rules = this.parts.gateway.rules;
    const signed = this.logins.signIn(rules, form.get('token') ?? '');
    if (signed === undefined) {
      await this.limiter.failed(address);
      if (limited !== undefined) return this.limited(res, address, limited.seconds, 'a wrong token while the limit of all addresses holds');
      this.parts.log.warn("console: a sign-in with a token that is no admin's was refused", { address });
      return this.send(res, 401, page('Sign in', loginPage("that token is not an admin's")));
    }
    await this.limiter.succeeded(address);
    this.parts.log.info(`console: ${signed.login.admin} signed in`, { admin: signed.login.admin });
    this.redirect(res, '/ui', { 'set-cookie': cookieOf(req, rules).set(signed.cookie) });
  }

  private limited(res: ServerResponse, address: string, wait: number, why: string): void {
    this.parts.log.warn(`console: too many failed sign-ins; ${why}`, { address, retryAfterSeconds: wait });
    this.send(res, 429, page('Sign in', loginPage(`too many failed sign-ins: try again in ${wait} s`)), { 'retry-after': String(wait) });
  }

  /** A live region's HTML, with an ETag so an unchanged region costs a 304. */
  private fragment(req: IncomingMessage, res: ServerResponse, body: Raw): void {
    const etag = `"${createHash('sha256').update(body.text).digest('base64url').slice(0, 27)}"`;
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, { ...SECURITY_HEADERS, etag }).end();
      return;
    }
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8', etag }).end(body.text);
  }

  private asset(req: IncomingMessage, res: ServerResponse, type: string, text: string): void {
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return this.send(res, 405, page('Not allowed', html`<p>GET only</p>`), { allow: 'GET' });
    res
      .writeHead(200, { ...SECURITY_HEADERS, 'content-type': type, 'cache-control': 'no-cache' })
      .end(req.method === 'HEAD' ? undefined : text);
  }

  private send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
    if (res.headersSent) return void res.end();
    res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8', ...headers }).end(body);
  }

  private redirect(res: ServerResponse, location: string, headers: Record<string, string> = {}): void {
    res.writeHead(303, { ...SECURITY_HEADERS, location, ...headers }).end();
  }

  private failed(res: ServerResponse, err: unknown): void {
    this.parts.log.error('console: internal error', { error: err });
    this.send(res, 500, page('Error', html`<p>${err instanceof Error ? err.message : String(err)}</p>`));
  }
}

/**
 * The login cookie's name and attributes for this request. Over https — the socket is TLS, or the
 * rules' `auth.resource` (the URL agents reach mcpgate at, behind a TLS proxy) is an https URL — it
 * is `Secure` with the `__Host-` name (so it is bound to this host and Path=/); over plain http on
 * loopback a `Secure` cookie would not be kept, so it is neither.
 */
function cookieOf(req: IncomingMessage, rules: Gateway['rules']): { name: string; set(value: string, maxAge?: number): string } {
  const secure = (req.socket as { encrypted?: boolean }).encrypted === true || rules.auth?.resource?.startsWith('https://') === true;
  const name = secure ? `__Host-${LOGIN_COOKIE}` : LOGIN_COOKIE;
  const attributes = secure ? 'Path=/; Secure; HttpOnly; SameSite=Strict' : `Path=${CONSOLE_PATH}; HttpOnly; SameSite=Strict`;
  return { name, set: (value, maxAge) => `${name}=${value}; ${attributes}${maxAge === undefined ? '' : `; Max-Age=${maxAge}`}` };
}

/** Pending calls per page of /ui/approvals. */
const APPROVALS_PAGE = 50;

function live(src: string, body: Raw): Raw {
  return html`<div data-live="${src}">${body}</div>`;
}

/** `/ui/server/NAME` → NAME (decoded), for one path segment only. */
function serverPath(path: string, prefix: string): string | undefined {
  if (!path.startsWith(prefix)) return undefined;
  const rest = path.slice(prefix.length);
  return rest === '' || rest.includes('/') ? undefined : decode(rest);
}

/** `/ui/approvals/ID` → {id}; `/ui/approvals/ID/approve` or `/deny` → {id, action}. */
function approvalPath(path: string): { id: string; action: 'approve' | 'deny' | undefined } | undefined {
  const prefix = '/ui/approvals/';
  if (!path.startsWith(prefix)) return undefined;
  const [segment, action, ...rest] = path.slice(prefix.length).split('/');
  if (segment === undefined || segment === '' || rest.length > 0 || (action !== undefined && action !== 'approve' && action !== 'deny'))
    return undefined;
  const id = decode(segment);
  return id === undefined ? undefined : { id, action };
}

/** `/ui/server/NAME/ACTION` → NAME. */
function actionPath(path: string, action: string): string | undefined {
  const prefix = '/ui/server/';
  const suffix = `/${action}`;
  if (!path.startsWith(prefix) || !path.endsWith(suffix)) return undefined;
  const name = path.slice(prefix.length, -suffix.length);
  return name === '' || name.includes('/') ? undefined : decode(name);
}

function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** An urlencoded form body, bounded; undefined after answering 413/415. */
async function readForm(req: IncomingMessage, res: ServerResponse): Promise<URLSearchParams | undefined> {
  const type = req.headers['content-type'] ?? '';
  if (!type.startsWith('application/x-www-form-urlencoded')) {
    res
      .writeHead(415, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8' })
      .end('the console takes application/x-www-form-urlencoded forms');
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) {
      res
        .writeHead(413, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8', connection: 'close' })
        .end(`a console form is at most ${MAX_FORM_BYTES} bytes`);
      req.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
