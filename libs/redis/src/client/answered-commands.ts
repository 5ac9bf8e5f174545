import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from '../infra/connection';
import { SentWrites } from './sent-writes';

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
  // A Cluster's command reaches a node's sendCommand later (once the cluster is ready): tied to its call here.
  const route = redis.sendCommand.bind(redis);
  redis.sendCommand = (command, stream, node) => {
    SentWrites.claim(command);
    return route(command, stream, node);
  };
  // A Cluster keeps, re-sends and queues commands on each node's connection, made as it learns the nodes.
  for (const node of redis.nodes()) guard(node);
  redis.on('+node', guard);
}

function guard(redis: Redis): void {
  const send = redis.sendCommand.bind(redis);
  // Every (re)send goes through sendCommand: a command's first send (never settled yet), the resend after
  // a reconnect and the offline queue's flush. A pipeline's commands (a stream given) go as they are: a
  // transaction's MULTI or EXEC left out would leave the connection inside it (the client's pipelines only read).
  // Each send also tells SentWrites whether the command was written to the socket (ioredis then queues it to
  // be answered) or not: queued offline, or rejected at once (connection closed, no offline queue).
  redis.sendCommand = (command, stream) => {
    if (command.isSettled && stream === undefined) return command.promise;
    SentWrites.claim(command);
    const promise = send(command, stream);
    if (stream !== undefined || queued(redis, command)) SentWrites.written(command);
    return promise;
  };
}

/** Whether `command` was the last written on `redis` (ioredis 6 Redis.js sendCommand; a new queue per connection). */
function queued(redis: Redis, command: object): boolean {
  const written = (redis as unknown as { commandQueue?: { peekBack(): { command: object } | undefined } })
    .commandQueue;
  return written?.peekBack()?.command === command;
}
