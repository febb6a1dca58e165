// Reading the answer to one POST of the Streamable HTTP client (http-transport.ts): one JSON message
// (or a batch), or an SSE stream whose messages belong to that call (a server→client request on it
// is passed on as `related` to it); a stream that drops before the answer is resumed with GET +
// Last-Event-ID, and given up after MAX_RESUMES resumptions in a row that bring nothing. These are
// functions of the transport itself (`AnswerHost`), so an answer costs no more than a method would.
// https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#resumability-and-redelivery

import type { IncomingMessage } from 'node:http';
import type { RemoteServerConfig } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { nestedDeeperThan, parseMessage, wireLimits } from '../wire/jsonrpc.js';
import { SseParser } from '../wire/sse.js';
import { mediaType, pipeSse, readResponseBody, unreachable, type Exchange, type HttpClient, type Pauses } from './http-request.js';
import type { RemoteSession } from './remote-session.js';
import type { TransportEvents } from './transport.js';

/** Resumptions of one call's stream in a row that bring nothing before the call is failed. */
const MAX_RESUMES = 3;

/** One request of ours in flight: the exchange carrying its answer now (POST, then resumption GETs). */
export interface PendingPost {
  exchange: Exchange;
  cancelled: boolean;
  /** Set while its answer stream waits to be resumed: ends the wait early (`resumeNow`). */
  wake?: () => void;
}

/** What one answer stream delivered, across its resumptions. */
interface StreamState {
  answered: boolean;
  /** The last message that may be the answer, checked when the stream ends unanswered. */
  lastData: string | undefined;
  lastEventId: string;
  retryMs: number | undefined;
  delivered: number;
}

/** What reading an answer needs of its transport (HttpTransport is one). */
export interface AnswerHost {
  readonly state: 'open' | 'stopping' | 'closed';
  readonly config: RemoteServerConfig;
  readonly url: URL;
  readonly http: HttpClient;
  readonly pauses: Pauses;
  readonly log: Logger;
  readonly events: TransportEvents;
  readonly session: RemoteSession;
  readonly maxLength: number;
  readonly reconnectMs: number;
  /** A message from the server, to the session above. */
  emit(line: string, related: number | undefined): void;
  /** Answers our request `id` with an error in the server's place. */
  failCall(id: number, err: GatewayError): void;
  /** The server is gone: end everything and report it once. */
  lost(reason: GatewayError): void;
  badResponse(what: string): GatewayError;
}

/** The answer to one POST: one JSON message (or a batch), or an SSE stream of them. */
export async function readAnswer(t: AnswerHost, res: IncomingMessage, id: number | undefined, call: PendingPost): Promise<void> {
  const type = mediaType(res);
  if (type === 'text/event-stream') return readStream(t, res, id, call);
  if (type !== 'application/json') {
    res.resume();
    if (id !== undefined) t.failCall(id, t.badResponse(`answered with content type "${type}", not JSON or an event stream`));
    return;
  }
  let body;
  try {
    body = await readResponseBody(res, t.maxLength);
  } catch {
    if (t.state === 'open' && !call.cancelled && id !== undefined) t.failCall(id, dropped(t));
    return;
  }
  if (body.kind === 'overflow') {
    t.events.overflow(body.length);
    if (id !== undefined) t.failCall(id, tooLarge(t, body.length));
    return;
  }
  const text = body.text.trim();
  if (text.startsWith('{')) {
    // Some servers write several messages in one JSON body, one a line (progress, then the answer).
    if (!text.includes('\n') || isOneMessage(text)) return t.emit(text, id);
    for (const line of text.split('\n')) if (line.trim() !== '') t.emit(line.trim(), id);
    return;
  }
  if (text.startsWith('[')) {
    let batch: unknown;
    try {
      batch = JSON.parse(text);
    } catch {
      batch = undefined;
    }
    // Each member is re-encoded below: one nested past the limit must never reach JSON.stringify.
    if (Array.isArray(batch) && !nestedDeeperThan(batch, wireLimits.maxDepth + 1)) {
      for (const msg of batch) t.emit(JSON.stringify(msg), id);
      return;
    }
  }
  if (id !== undefined) t.failCall(id, t.badResponse(text === '' ? 'answered with an empty body' : 'answered with a body that is not a JSON-RPC message'));
}

/** An SSE answer; if it ends before the answer, resume it (GET + Last-Event-ID) or fail the call. */
async function readStream(t: AnswerHost, res: IncomingMessage, id: number | undefined, call: PendingPost): Promise<void> {
  const stream: StreamState = { answered: false, lastData: undefined, lastEventId: '', retryMs: undefined, delivered: 0 };
  await consume(t, res, id, stream);
  if (id === undefined) return;
  for (let fruitless = 0; ; ) {
    if (t.state !== 'open' || call.cancelled || isAnswered(stream, id)) return;
    if (stream.lastEventId === '' || fruitless >= MAX_RESUMES) return t.failCall(id, dropped(t));
    const delay = stream.retryMs ?? t.reconnectMs;
    const woken = new Promise<boolean>((resolve) => (call.wake = () => resolve(t.state === 'open')));
    t.events.paused?.(id, delay);
    const waited = await Promise.race([t.pauses.wait(delay), woken]);
    call.wake = undefined;
    if (!waited || call.cancelled) return;
    t.log.debug('resuming an answer stream that ended before the answer', { id, lastEventId: stream.lastEventId });
    const headers = { ...t.session.headers(), accept: 'text/event-stream', 'last-event-id': stream.lastEventId };
    call.exchange = t.http.send(t.url, 'GET', headers);
    let resumed: IncomingMessage;
    try {
      resumed = await call.exchange.response;
    } catch (err) {
      if (t.state !== 'open' || call.cancelled) return;
      const reason = unreachable(t.config.name, t.url, err);
      t.failCall(id, reason);
      return t.lost(reason);
    }
    if (resumed.statusCode !== 200 || mediaType(resumed) !== 'text/event-stream') {
      resumed.resume();
      return t.failCall(id, dropped(t));
    }
    const before = stream.delivered;
    await consume(t, resumed, id, stream);
    fruitless = stream.delivered > before ? 0 : fruitless + 1;
  }
}

async function consume(t: AnswerHost, res: IncomingMessage, id: number | undefined, stream: StreamState): Promise<void> {
  const parser = new SseParser({
    event: (e) => {
      if (e.event !== 'message' || e.data === '') return; // '' primes the client with an event id
      stream.delivered += 1;
      // Requests and notifications always carry "method"; a message without it is the answer.
      if (!e.data.includes('"method"')) stream.answered = true;
      else stream.lastData = e.data;
      t.emit(e.data, id);
    },
    retry: (ms) => (stream.retryMs = ms),
    overflow: (length) => {
      t.events.overflow(length);
      if (id === undefined || stream.answered) return;
      stream.answered = true; // the dropped message may have been the answer: do not wait for it
      t.failCall(id, tooLarge(t, length));
    },
  }, t.maxLength);
  await pipeSse(res, parser);
  if (parser.lastEventId !== '') stream.lastEventId = parser.lastEventId;
}

function isAnswered(stream: StreamState, id: number): boolean {
  if (stream.answered || stream.lastData === undefined) return stream.answered;
  const parsed = parseMessage(stream.lastData);
  return parsed.kind === 'response' && parsed.msg.id === id;
}

/** Whether a body with line breaks is still one JSON message (pretty-printed), not one message a line. */
function isOneMessage(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function dropped(t: AnswerHost): GatewayError {
  return new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${t.config.name}" closed the connection before answering; the outcome of the call is unknown (it may have run)`, { server: t.config.name, detail: { outcome: 'unknown' } });
}

function tooLarge(t: AnswerHost, length: number): GatewayError {
  return t.badResponse(`sent a message over the size limit (${length} of at most ${t.maxLength} bytes); it was discarded`);
}
