// The opaque `requestState` mcpgate hands a modern agent with an input-required result (a 2025-era
// server asked it something during its call). It must come back unchanged with the agent's retry,
// and it names the call waiting for the answer, so it is sealed with authenticated encryption
// (AES-256-GCM): an agent can neither read it nor forge or alter one. It is bound to the agent (its
// id is the additional authenticated data and is inside) and to an expiry; the call it names is
// taken once, so a replay finds nothing. The key comes from MCPGATE_REQUEST_STATE_KEY, or in a
// cluster from the cluster secret (so every worker opens any worker's states), or is made at start
// (then a restart invalidates every state in flight, as it ends the calls they name); wire/era.ts
// parses the variable for the command line. In a cluster the waiting call lives in one worker's
// memory, so the state also names that worker (its holder): a retry reaching another worker is
// forwarded there.

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** A state longer than this is not one of ours (and is not decrypted). */
const MAX_STATE_CHARS = 4096;

interface SealedFields {
  /** The waiting call's handle (random, unguessable). */
  handle: string;
  /** Milliseconds since the epoch after which the state is refused. */
  expires: number;
  /** The worker whose memory holds the call (in a cluster; undefined otherwise). */
  holder?: string;
}

export class RequestStateSealer {
  private readonly key: Buffer;

  /** `holder`: the name of the worker this process is in a cluster, sealed into every state. */
  constructor(
    key?: Buffer,
    readonly holder?: string,
  ) {
    if (key !== undefined && key.length !== 32) throw new RangeError('the request state key must be 32 bytes (AES-256)');
    this.key = key ?? randomBytes(32);
  }

  seal(agent: string, fields: SealedFields): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(aad(agent));
    const plain = Buffer.from(
      JSON.stringify({ v: VERSION, a: agent, h: fields.handle, e: fields.expires, ...(this.holder !== undefined && { w: this.holder }) }),
      'utf8',
    );
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The fields of a state sealed for `agent`, or why it is refused (forged, altered, another agent's, expired). */
  open(agent: string, state: string, now = Date.now()): SealedFields | string {
    if (state.length > MAX_STATE_CHARS || !/^[A-Za-z0-9_-]+$/.test(state)) return 'requestState is not one mcpgate issued';
    const bytes = Buffer.from(state, 'base64url');
    if (bytes.length <= IV_BYTES + TAG_BYTES) return 'requestState is not one mcpgate issued';
    let plain: Buffer;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(aad(agent));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      plain = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
    } catch {
      // Altered, forged, sealed under another key, or sealed for another agent: all look the same.
      return 'requestState was not issued by this gateway to this agent, or was altered';
    }
    const fields = JSON.parse(plain.toString('utf8')) as { v?: unknown; a?: unknown; h?: unknown; e?: unknown; w?: unknown };
    if (
      fields.v !== VERSION ||
      fields.a !== agent ||
      typeof fields.h !== 'string' ||
      typeof fields.e !== 'number' ||
      (fields.w !== undefined && typeof fields.w !== 'string')
    )
      return 'requestState is not one mcpgate issued';
    if (fields.e < now) return 'requestState has expired; send the request again without it';
    return { handle: fields.h, expires: fields.e, ...(typeof fields.w === 'string' && { holder: fields.w }) };
  }
}

function aad(agent: string): Buffer {
  return Buffer.from(`mcpgate requestState v${VERSION}\0${agent}`, 'utf8');
}
