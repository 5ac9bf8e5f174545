import { type ScriptName, scriptOfCall } from '../../libs/redis/src/store/script-loader';
import type { SentCommand } from './reply-proxy';
import { sleep } from './scenario';

/** Polls `probe` every 20 ms until it gives a value or `ms` has passed (then its last answer). */
export async function withDeadline<T>(ms: number, probe: () => T | undefined): Promise<T | undefined> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined || Date.now() > deadline) return value;
    await sleep(20);
  }
}

/** Matches the calls of one Sundial script (EVALSHA, the EVAL ioredis falls back to, or FCALL). */
export function scriptMatcher(script: ScriptName): (command: SentCommand) => boolean {
  return (command) => scriptOfCall(command) === script;
}
