import { randomBytes } from 'node:crypto';

/**
 * What makes a script call safe to repeat (docs/design.md "Repeated calls"): its request id, and how long
 * Redis remembers the first answer under it.
 */
export interface ScriptRequest {
  id: string;
  memoryMs: number;
}

/** The request of each script call one operation makes; `part` names the call within the operation. */
export interface CallRequests {
  (part: string): ScriptRequest;
  /** a caller's retry: its request id was seen before with the same arguments */
  repeated: boolean;
  /**
   * the ids are the caller's request id: any process may repeat a call, one of another release among
   * them (a rolling upgrade), so its first answer is kept in a form every release reads
   */
  named: boolean;
}

/** The id of the call `part` of an operation under a caller's request id (client/write-requests.ts). */
export function namedCall(requestId: string, part: string): string {
  return `${requestId}:${part}`;
}

/** How long a first answer is remembered when only a lost reply can repeat the call (ioredis resends it). */
export const RESEND_MEMORY_MS = 60_000;

/** A request with a fresh id (72 random bits), remembered long enough for ioredis's resend after a reconnect. */
export function resendSafe(memoryMs = RESEND_MEMORY_MS): ScriptRequest {
  return { id: freshId(), memoryMs };
}

const ID_BYTES = 9;
/**
 * Ids drawn per randomBytes call: every claim and completion carries a fresh id, and one randomBytes call
 * each (a trip into OpenSSL) was a visible share of a busy worker's CPU.
 */
const IDS_PER_DRAW = 256;
let randomPool = Buffer.alloc(0);
let poolOffset = 0;

function freshId(): string {
  if (poolOffset + ID_BYTES > randomPool.length) {
    randomPool = randomBytes(ID_BYTES * IDS_PER_DRAW);
    poolOffset = 0;
  }
  poolOffset += ID_BYTES;
  return randomPool.toString('base64url', poolOffset - ID_BYTES, poolOffset);
}

/** An operation without a caller's request id: each of its calls gets a fresh one. */
export const freshRequests: CallRequests = Object.assign(() => resendSafe(), {
  repeated: false,
  named: false,
});

/**
 * The ARGV[1] of a script call that carries a request: the prefix, then '\n' id '\n' memory ms
 * (includes/requests.lua `with_request` takes it apart; scripts see the plain prefix).
 */
export function requestPrefix(prefix: string, request: ScriptRequest): string {
  return `${prefix}\n${request.id}\n${Math.max(1, Math.round(request.memoryMs))}`;
}
