import type { ParsedArgs } from './args';
import type { SundialHttp } from './http';
import type { Output } from './output';

/**
 * One CLI command, one file in commands/, listed (with its name and summary) in registry.ts. `run`
 * prints its answer through `out` and throws a CliError when it fails; main.ts turns that into a
 * message and an exit code. A command that talks to Redis rather than the HTTP API ignores `api` and
 * reads its settings from `env`.
 */
export interface Command {
  /** e.g. `sundial pause <key>` */
  usage: string;
  run(input: CommandInput): Promise<void>;
}

export interface CommandInput {
  args: ParsedArgs;
  api: SundialHttp;
  out: Output;
  env: NodeJS.ProcessEnv;
}
