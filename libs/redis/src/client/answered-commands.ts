import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from '../infra/connection';

/**
 * Nothing is sent to Redis after its caller was answered. ioredis 6 keeps a command that `commandTimeout`
 * rejected on its connection: unanswered when the connection resets, it is sent again after the reconnect
 * (`autoResendUnfulfilledCommands`), and one still in the offline queue is sent once the connection is back.
 * A write answered `outcome-unknown` then ran seconds or minutes later, after its caller had moved on: a
 * cancelled timer came back, a newer reschedule was undone (test/redis/unanswered-resend.test.ts).
 * Commands still awaited are sent again as before, so a reset connection's calls still get Redis's answer.
 * Bytes Redis had already received (a frozen Redis that resumes) still run: spec §5.5 says so.
 */
export function sendNothingAnswered(redis: RedisClient): void {
  if (!(redis instanceof Cluster)) return guard(redis);
  // A Cluster keeps, re-sends and queues commands on each node's connection, made as it learns the nodes.
  for (const node of redis.nodes()) guard(node);
  redis.on('+node', guard);
}

function guard(redis: Redis): void {
  const send = redis.sendCommand.bind(redis);
  // Every (re)send goes through sendCommand: a command's first send (never settled yet), the resend after
  // a reconnect and the offline queue's flush. A pipeline's commands (a stream given) go as they are: a
  // transaction's MULTI or EXEC left out would leave the connection inside it (the client's pipelines only read).
  redis.sendCommand = (command, stream) =>
    command.isSettled && stream === undefined ? command.promise : send(command, stream);
}
