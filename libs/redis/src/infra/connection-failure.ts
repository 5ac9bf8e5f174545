import { ReplyError } from 'ioredis';

const CONNECTION_MESSAGES = [
  'Connection is closed.',
  'connect ETIMEDOUT',
  "Stream isn't writeable",
  'Socket timeout',
  'Command timed out',
  // A Redis Cluster none of whose nodes answers (infra/cluster-outage.ts; ioredis's own wording).
  "Cluster isn't ready",
  'None of startup nodes is available',
];
/** Redis refusals that mean "not now" rather than "wrong call". */
const TRANSIENT_REPLIES = /^(LOADING|READONLY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|BUSY|OOM)\b/;

/** Whether an ioredis error means Redis could not be reached or could not serve (→ 'unavailable'). */
export function isConnectionFailure(error: unknown): error is Error {
  if (!(error instanceof Error)) return false;
  if (error instanceof ReplyError) return TRANSIENT_REPLIES.test(error.message);
  // RedisStartTimeout: a start that waited for Redis in vain (wait-for-redis.ts).
  if (error.name === 'MaxRetriesPerRequestError' || error.name === 'RedisStartTimeout') return true;
  const code = (error as NodeJS.ErrnoException).code;
  if (typeof code === 'string' && code.startsWith('E')) return true; // ECONNREFUSED, ENOTFOUND, EPIPE, ...
  return CONNECTION_MESSAGES.some((message) => error.message.startsWith(message));
}
