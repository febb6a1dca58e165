// One agent session's resources/subscribe and resources/unsubscribe (and a modern listen stream's
// URIs): the URI is routed under the rules as a read is, then held on the server's shared connection
// (`Subscriptions`) or, for a per-agent or per-session server, on the session's own pooled connection
// (`OwnSubscriptions`). AgentSession.subscribeUri calls it.

import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { Claims } from '../rules/decide.js';
import type { Connection } from '../servers/connection.js';
import type { SessionPartsOf } from './session-parts.js';

/** What a subscription uses of the gateway. */
type SubscribeParts<Session> = Pick<SessionPartsOf<Session>, 'settling' | 'router' | 'subscriptions' | 'ownSubscriptions' | 'scoped'>;

/** Subscribes `session` to a resource URI (or unsubscribes it); throws why not. `closed`: the session has ended. */
export async function subscribeUri<Session extends { readonly agent: string; readonly claims: Claims | undefined }>(
  parts: SubscribeParts<Session>, session: Session, log: Logger, closed: () => boolean, subscribe: boolean, publicUriParam: unknown,
): Promise<void> {
  const method = subscribe ? 'resources/subscribe' : 'resources/unsubscribe';
  await parts.settling.settled;
  const route = parts.router.uri(log, session.agent, method, publicUriParam, session.claims);
  if (route instanceof GatewayError) throw route;
  const { conn, uri, publicUri } = route;
  if (conn.config.sessions !== 'shared') return ownSubscription(parts, session, closed, subscribe, conn, uri);
  if ((conn.info?.capabilities.resources as { subscribe?: boolean } | undefined)?.subscribe !== true) {
    throw new GatewayError('MCPG_CAPABILITY_UNSUPPORTED', `server "${conn.name}" does not support resource subscriptions`, { server: conn.name });
  }
  if (closed()) return;
  if (subscribe) await parts.subscriptions.subscribe(session, conn, uri, publicUri);
  else await parts.subscriptions.unsubscribe(session, conn, uri, publicUri);
}

/** A per-agent or per-session server: subscribe on the session's own pooled connection; throws why not. */
async function ownSubscription<Session>(parts: SubscribeParts<Session>, session: Session, closed: () => boolean, subscribe: boolean, conn: Connection, uri: string): Promise<void> {
  const got = parts.scoped(session, conn);
  const own = got instanceof Promise ? await got : got;
  if ((own.info?.capabilities.resources as { subscribe?: boolean } | undefined)?.subscribe !== true) {
    throw new GatewayError('MCPG_CAPABILITY_UNSUPPORTED', `server "${conn.name}" does not support resource subscriptions`, { server: conn.name });
  }
  if (closed()) return;
  if (subscribe) await parts.ownSubscriptions.subscribe(session, own, uri);
  else await parts.ownSubscriptions.unsubscribe(session, own, uri);
}
